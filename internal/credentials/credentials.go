// Package credentials hands an order's users the credentials of its
// instance, and rotates them. Steward keeps none: each read asks the
// provider that holds the instance (with the call token it registered),
// and a rotation is an Operation whose job asks the provider to replace
// them. A read is audited like a change, since it discloses a secret.
package credentials

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// KindRotate is the kind of a rotation's Operation.
const KindRotate = "rotate_credentials"

var (
	// ErrNotPlaced is returned for an order that has no instance on a
	// provider, or whose provider no longer holds it.
	ErrNotPlaced = errors.New("the order has no instance on a provider")
	// ErrNotSupported is returned for an order whose provider hands out no
	// credentials (it did not register the credentials operation).
	ErrNotSupported = errors.New("the order's provider hands out no credentials")
	// ErrRotationInProgress is returned when a rotation of the order's
	// credentials has not finished yet.
	ErrRotationInProgress = errors.New("a rotation of the order's credentials is still running")
)

// Placed is where an order's current instance is.
type Placed struct {
	OrderID      string
	Project      string
	InstanceID   string
	ProviderName string
}

// Orders finds an order's current instance (the lifecycle). It returns the
// lifecycle's not-found error for an order the project does not have.
type Orders interface {
	PlacedOrder(ctx context.Context, project, ref string) (Placed, error)
}

// Providers reads the service registry.
type Providers interface {
	Provider(ctx context.Context, idOrName string) (sprm.Provider, error)
}

// providerCalls is how credentials are asked of a provider
// (*provider.Client).
type providerCalls interface {
	Credentials(ctx context.Context, endpoint, id string) (provider.Credentials, error)
	RotateCredentials(ctx context.Context, endpoint string, req provider.RotateRequest) (provider.Rotated, error)
}

// operationRecorder records a rotation's Operation (*operations.Service).
type operationRecorder interface {
	StartTx(ctx context.Context, tx *store.Tx, p operations.StartParams) (operations.Operation, error)
	FinishTx(ctx context.Context, tx *store.Tx, id string, p operations.FinishParams) (operations.Operation, error)
	Get(ctx context.Context, project, id string) (operations.Operation, error)
	ByRequestKey(ctx context.Context, project, key string) (operations.Operation, error)
}

// jobInserter queues River jobs in a transaction (*jobs.Client).
type jobInserter interface {
	InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) error
}

// Config configures the Service; every member but Logger, JobQueue and
// RotateAttempts is required.
type Config struct {
	DB         *store.DB
	Orders     Orders
	Providers  Providers
	Client     providerCalls
	Operations operationRecorder
	Jobs       jobInserter
	// JobQueue is the queue rotation jobs run on (the providers queue).
	JobQueue string
	// RotateAttempts bounds the attempts to have the provider rotate before
	// the Operation fails. Defaults to 10.
	RotateAttempts int
	Logger         *slog.Logger
}

// Service is the credentials domain.
type Service struct {
	cfg Config
	log *slog.Logger
}

// New returns the Service for cfg.
func New(cfg Config) *Service {
	cfg.RotateAttempts = cmp.Or(cfg.RotateAttempts, 10)
	log := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).With("component", "credentials")
	return &Service{cfg: cfg, log: log}
}

// target is an order's instance and the provider that holds it, checked
// to hand out credentials.
func (s *Service) target(ctx context.Context, project, ref string) (Placed, sprm.Provider, error) {
	placed, err := s.cfg.Orders.PlacedOrder(ctx, project, ref)
	if err != nil {
		return Placed{}, sprm.Provider{}, err
	}
	if placed.InstanceID == "" || placed.ProviderName == "" {
		return Placed{}, sprm.Provider{}, fmt.Errorf("%w: order %s is not placed yet", ErrNotPlaced, placed.OrderID)
	}
	prov, err := s.cfg.Providers.Provider(ctx, placed.ProviderName)
	if errors.Is(err, sprm.ErrProviderNotFound) {
		return Placed{}, sprm.Provider{}, fmt.Errorf("%w: its provider %s is no longer registered", ErrNotPlaced,
			placed.ProviderName)
	}
	if err != nil {
		return Placed{}, sprm.Provider{}, err
	}
	if !slices.Contains(prov.Operations, provider.OperationCredentials) {
		return Placed{}, sprm.Provider{}, fmt.Errorf("%w: provider %s of order %s", ErrNotSupported, prov.Name,
			placed.OrderID)
	}
	return placed, prov, nil
}

// Credentials asks the provider of order ref for its instance's
// credentials. The answer is a secret: it is neither stored nor logged.
func (s *Service) Credentials(ctx context.Context, project, ref string) (Placed, provider.Credentials, error) {
	placed, prov, err := s.target(ctx, project, ref)
	if err != nil {
		return Placed{}, provider.Credentials{}, err
	}
	c, err := s.cfg.Client.Credentials(provider.WithCallToken(ctx, prov.CallToken), prov.Endpoint, placed.InstanceID)
	if err != nil {
		return Placed{}, provider.Credentials{}, s.providerFailed(prov, placed, err)
	}
	return placed, c, nil
}

// providerFailed turns a provider's failure into the caller's error: a
// 404 means the provider no longer holds the instance; anything else that
// is not the request's fault (a 5xx, a refused call token, no answer) is
// the provider being unavailable.
func (s *Service) providerFailed(prov sprm.Provider, placed Placed, err error) error {
	var re *provider.ResponseError
	switch {
	case errors.Is(err, provider.ErrNotFound):
		return fmt.Errorf("%w: provider %s does not hold instance %s", ErrNotPlaced, prov.Name, placed.InstanceID)
	case errors.As(err, &re) && re.StatusCode >= 400 && re.StatusCode < 500 && re.StatusCode != 401 && re.StatusCode != 429:
		return &sprm.ProviderError{Provider: prov.Name, StatusCode: re.StatusCode, Body: re.Body}
	}
	return fmt.Errorf("%w: %s: %w", sprm.ErrProviderUnavailable, prov.Name, err)
}
