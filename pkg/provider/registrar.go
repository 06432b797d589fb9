package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"
)

// RegistrarConfig configures a [Registrar].
type RegistrarConfig struct {
	// StewardURL is Steward's base URL, such as "http://127.0.0.1:8080".
	// It or StewardURLs is required.
	StewardURL string
	// StewardURLs are more base URLs of the same Steward (its replicas),
	// tried after StewardURL: an attempt moves on to the next URL when it
	// cannot connect, and the URL that answered is kept for later calls.
	StewardURLs []string
	// Token, when set, is sent as "Authorization: Bearer <token>". Defaults
	// to none (a server started with --dev).
	Token string
	// Registration is what the provider says about itself. Name, Endpoint
	// and at least one service type are required.
	Registration Registration
	// HTTPClient sends the calls. Defaults to a client on a clone of
	// http.DefaultTransport that keeps up to 256 idle connections per host; redirects are never followed.
	HTTPClient *http.Client
	// Timeout bounds each attempt. Defaults to 10s.
	Timeout time.Duration
	// Retry says how attempts are repeated. Defaults: waits from 200ms to
	// 30s, attempts unlimited until ctx ends.
	Retry RetryPolicy
	// Logger hears about each failed attempt that is retried (Warn).
	// Defaults to discarding.
	Logger *slog.Logger
}

// RegisteredProvider is Steward's answer to a registration: the provider as
// the registry holds it (API.md, "Service registry — providers").
type RegisteredProvider struct {
	Registration
	// ID is the provider's id in Steward.
	ID   string `json:"id"`
	Path string `json:"path,omitempty"`
	// Status is healthy, degraded or unavailable.
	Status string `json:"status,omitempty"`
	// Created is true when Steward answered 201 (a new provider) and false
	// for 200 (a re-registration).
	Created bool `json:"-"`
}

// Registrar registers a provider with Steward: POST /api/v1/providers (the
// RegisterProvider operation of Steward's typed client, package
// github.com/stewardhq/steward/pkg/client), which is idempotent by name, so
// registering at every start is safe. Build one with [NewRegistrar]; it is
// safe for concurrent use.
type Registrar struct {
	api    stewards
	cfg    RegistrarConfig
	logger *slog.Logger
}

// NewRegistrar checks cfg and fills its defaults. It returns an error when
// no Steward URL is given or one is not an http or https URL, or the registration lacks its
// name, endpoint or service types.
func NewRegistrar(cfg RegistrarConfig) (*Registrar, error) {
	api, err := newStewards(stewardURLs(cfg.StewardURL, cfg.StewardURLs), cfg.Token, cfg.HTTPClient, cfg.Timeout, new(atomic.Int32))
	if err != nil {
		return nil, fmt.Errorf("new registrar: steward URL: %w", err)
	}
	reg := cfg.Registration
	if reg.Name == "" || reg.Endpoint == "" || len(reg.ServiceTypes) == 0 {
		return nil, errors.New("new registrar: registration needs a name, an endpoint and service types")
	}
	cfg.Retry = cfg.Retry.withDefaults(30*time.Second, 0)
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// No "component" of its own: the caller's logger names the component
	// (the process provider's says processprovider), and a second one
	// would repeat the key in every line.
	return &Registrar{
		api:    api,
		cfg:    cfg,
		logger: logger.With("provider_name", reg.Name),
	}, nil
}

// Register registers the provider, blocking until Steward accepts it (2xx),
// refuses it, or ctx ends. It retries network errors, timeouts, 5xx and 429
// with the backoff of [RegistrarConfig.Retry]. It returns an error wrapping
// a [*ResponseError], which carries Steward's problem body, when Steward
// answers another 4xx (or a 3xx): that is final. When ctx ends it returns an
// error wrapping ctx's error and the last attempt's. It returns
// [ErrInvalidResponse] when Steward's answer has no provider id.
func (r *Registrar) Register(ctx context.Context) (RegisteredProvider, error) {
	body, err := json.Marshal(r.cfg.Registration)
	if err != nil {
		return RegisteredProvider{}, fmt.Errorf("register provider %q: encode request: %w", r.cfg.Registration.Name, err)
	}
	var got RegisteredProvider
	attempt := func(ctx context.Context) error {
		a, err := r.api.call(ctx, func(s stewardAPI) (answer, error) { return s.registerProvider(ctx, body) })
		if err != nil {
			return err
		}
		if !a.ok() {
			return a.responseError()
		}
		got = RegisteredProvider{}
		if err := a.decode(&got); err != nil {
			return err
		}
		if got.ID == "" {
			return fmt.Errorf("%w: the answer has no provider id", ErrInvalidResponse)
		}
		got.Created = a.status == http.StatusCreated
		return nil
	}
	onRetry := func(n int, wait time.Duration, err error) {
		r.logger.WarnContext(ctx, "register provider: will retry",
			"attempt", n, "wait", wait, "error", err)
	}
	if err := r.cfg.Retry.run(ctx, attempt, onRetry); err != nil {
		return RegisteredProvider{}, fmt.Errorf("register provider %q: %w", r.cfg.Registration.Name, err)
	}
	r.logger.InfoContext(ctx, "provider registered", "provider_id", got.ID, "created", got.Created)
	return got, nil
}
