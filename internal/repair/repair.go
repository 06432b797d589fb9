package repair

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// The runtime kinds a service type declares (API.md, Service types).
const (
	KindKubernetes = "kubernetes"
	KindSimple     = "simple"
)

// The next safe actions a refusal or a failed operation points to.
const (
	NextReconcile        = "reconcile"
	NextRepairMember     = "repair_member"
	NextReplaceMember    = "replace_member"
	NextReplaceInstance  = "replace_app_instance"
	NextRetry            = "retry"
	NextWaitForOperation = "wait_for_operation"
)

// Providers tells where a provider listens, how it is called and what it
// supports (the service registry).
type Providers interface {
	RegisteredProvider(ctx context.Context, name string) (Provider, error)
}

// Provider is a registered provider as a delivery calls it.
type Provider struct {
	Endpoint string
	// CallToken is the secret presented on the call (provider.WithCallToken).
	CallToken  string
	Operations []string
}

// WorkerTokens issues the token a repair worker reports with: a service
// account bound to one operation, and ends it, in the transaction that
// ends the operation, so that it does not outlive its work.
type WorkerTokens interface {
	IssueWorkerToken(ctx context.Context, operationID string, ttl time.Duration) (string, error)
	EndWorkerTokensTx(ctx context.Context, tx *store.Tx, operationID string) error
}

// jobInserter queues River jobs in a transaction (*jobs.Client).
type jobInserter interface {
	InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) error
}

// Config configures the Service. DB, Orders, Providers, Tokens and Jobs
// are required.
type Config struct {
	DB *store.DB
	// Orders finds app instances: orders whose service type declares a
	// runtime. Their runtimes are this package's.
	Orders    *order.Store
	Providers Providers
	Tokens    WorkerTokens
	Jobs      jobInserter
	// JobQueue is the queue delivery jobs run on (the providers queue).
	JobQueue string
	// Client calls providers. Defaults to provider.NewClient with defaults.
	Client *provider.Client
	Logger *slog.Logger
	// DeliveryAttempts bounds the attempts to hand an operation to its
	// provider before it fails with DELIVERY_FAILED. Defaults to 10.
	DeliveryAttempts int
	// Backoff is the wait before delivery retry n (1-based). Defaults to
	// River's exponential backoff.
	Backoff func(attempt int) time.Duration
	// SilenceTimeout fails an unfinished operation whose worker has not
	// reported for this long (REPAIR_TIMED_OUT), so a lost worker cannot
	// block the app instance's repairs for ever. Defaults to 30m.
	SilenceTimeout time.Duration
	// WorkerTokenTTL is how long a worker token lives. Defaults to 24h.
	WorkerTokenTTL time.Duration
	Now            func() time.Time
	// Changed, when set, is told the id of each app instance (its order's
	// id) whose runtime or repair operations a transaction changed, once it
	// has committed (live.Feed's Changed: the console's order page follows
	// a repair's steps).
	Changed func(orderID string)
}

// Service is the repair domain.
type Service struct {
	cfg Config
	q   *queries
	log *slog.Logger
}

// appInstance finds the app instance ref (an id or an identity) names in
// project. Another project's order, a missing one and one whose type has
// no runtime are ErrAppInstanceNotFound.
func (s *Service) appInstance(ctx context.Context, project, ref string) (order.AppInstance, error) {
	app, err := s.cfg.Orders.AppInstance(ctx, project, ref)
	switch {
	case errors.Is(err, order.ErrNotFound):
		return order.AppInstance{}, fmt.Errorf("%w: %s", ErrAppInstanceNotFound, ref)
	case errors.Is(err, order.ErrNoRuntime):
		// not wrapped: the answer is the app instance's 404, not the order's
		return order.AppInstance{}, fmt.Errorf("%w: %v", ErrAppInstanceNotFound, err)
	}
	return app, err
}

// New returns the Service for cfg.
func New(cfg Config) *Service {
	if cfg.Client == nil {
		cfg.Client = provider.NewClient(provider.ClientConfig{})
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	cfg.DeliveryAttempts = cmp.Or(cfg.DeliveryAttempts, 10)
	cfg.SilenceTimeout = cmp.Or(cfg.SilenceTimeout, 30*time.Minute)
	cfg.WorkerTokenTTL = cmp.Or(cfg.WorkerTokenTTL, 24*time.Hour)
	return &Service{cfg: cfg, q: newQueries(cfg.DB.Engine()),
		log: cfg.Logger.With("component", "repair")}
}

func (s *Service) now() time.Time { return store.Now(s.cfg.Now) }

// changedTx tells Config.Changed of the app instance once tx commits.
func (s *Service) changedTx(tx *store.Tx, appInstanceID string) {
	if s.cfg.Changed != nil {
		tx.AfterCommit(func() { s.cfg.Changed(appInstanceID) })
	}
}

// Errors of the domain; the server maps each to its problem reason.
var (
	ErrAppInstanceNotFound = errors.New("app instance not found")
	ErrOperationNotFound   = errors.New("repair operation not found")
	ErrMemberNotFound      = errors.New("runtime member not found")
	ErrRepairInProgress    = errors.New("a repair operation is already running on the app instance")
	ErrRestartNotSupported = errors.New("restart is not supported for this runtime")
	ErrRepairNotSupported  = errors.New("the provider does not execute repair operations")
	ErrAppInstanceNotReady = errors.New("the app instance is not placed on a provider")
	ErrQuorumNotProvenSafe = errors.New("restarting a server is not proven safe for quorum")
	ErrRuntimeStateUnknown = errors.New("the runtime has not been reported yet")
	ErrRepairNotAvailable  = errors.New("no safe repair remains for the runtime")
	ErrOperationDone       = errors.New("the repair operation is finished")
	ErrReportRegression    = errors.New("the report moves the operation backwards")
	ErrStaleRuntimeReport  = errors.New("runtime report older than the last one applied")
)

// RefusedError is a request refused by the seed's safety rules: it names
// the rule's reason (one of the Err values above) and the next safe action.
type RefusedError struct {
	Reason         error
	Detail         string
	NextSafeAction string
}

func (e *RefusedError) Error() string { return e.Reason.Error() + ": " + e.Detail }
func (e *RefusedError) Unwrap() error { return e.Reason }

// ProblemFields implements httpapi's problem extras.
func (e *RefusedError) ProblemFields() map[string]any {
	return map[string]any{"next_safe_action": e.NextSafeAction}
}

// InProgressError names the running operation a second request met.
type InProgressError struct{ OperationID string }

func (e *InProgressError) Error() string {
	return ErrRepairInProgress.Error() + ": " + e.OperationID
}
func (e *InProgressError) Unwrap() error { return ErrRepairInProgress }

// ProblemFields implements httpapi's problem extras.
func (e *InProgressError) ProblemFields() map[string]any {
	return map[string]any{"repair_operation_id": e.OperationID, "next_safe_action": NextWaitForOperation}
}

// restartRefused is the kubernetes answer to restart (the seed: reject it
// with a conflict and point to repair or reconcile).
type restartRefused struct{ kind string }

func (e restartRefused) Error() string {
	return ErrRestartNotSupported.Error() + ": a " + e.kind + " runtime is repaired or reconciled, not restarted"
}
func (e restartRefused) Unwrap() error { return ErrRestartNotSupported }

// ProblemFields implements httpapi's problem extras.
func (e restartRefused) ProblemFields() map[string]any {
	return map[string]any{"suggested_actions": []string{provider.RepairActionRepair, provider.RepairActionReconcile}}
}
