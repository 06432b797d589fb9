package sprm

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// providerClient is how the SPRM calls providers (pkg/provider.Client).
type providerClient interface {
	Create(ctx context.Context, endpoint string, req provider.CreateRequest) (provider.Instance, error)
	Get(ctx context.Context, endpoint, instanceID string) (provider.Instance, error)
	Delete(ctx context.Context, endpoint, instanceID string) (provider.Instance, error)
	Update(ctx context.Context, endpoint string, req provider.UpdateRequest) (provider.Instance, error)
	Health(ctx context.Context, endpoint string) (provider.Health, error)
	Validate(ctx context.Context, endpoint string, req provider.CreateRequest) error
	BeginExport(ctx context.Context, endpoint, instanceID string) (provider.ExportGrant, error)
	EndExport(ctx context.Context, endpoint, instanceID string) error
}

// specValidator checks a spec against its service type's schema (catalog).
type specValidator interface {
	ValidateSpec(ctx context.Context, serviceType string, spec map[string]any) error
}

// Config configures the Service. DB, Providers and Specs are required.
type Config struct {
	DB        *store.DB
	Providers providerClient
	Specs     specValidator
	// Changes records every status change of an instance created for an
	// order, in the transaction that writes it, for the order's reconcile
	// (*reconcile.Queue). Defaults to none.
	Changes changeRecorder
	Logger  *slog.Logger
	// Registerer receives the SPRM's metrics. Defaults to none.
	Registerer prometheus.Registerer
	// Egress decides which endpoint hosts a registration may name (the
	// connections themselves are checked by Providers' transport).
	// Defaults to egress.New(nil): loopback and public addresses.
	Egress *egress.Policy
	// Now reads the clock. It dates every write and decides every timing:
	// when a provider is next checked and how far that backs off, a health
	// answer's latency, when a cleanup claim expires, the stale-intent grace
	// and the unknown-report TTL. Defaults to time.Now.
	Now func() time.Time

	// HealthInterval is the time between two checks of a provider that
	// answers. Defaults to 10s.
	HealthInterval time.Duration
	// SlowThreshold: a health answer slower than this counts as degraded.
	// Defaults to 1s.
	SlowThreshold time.Duration
	// FailureThreshold is how many checks in a row must fail before a
	// provider is unavailable. Defaults to 3.
	FailureThreshold int
	// MaxHealthBackoff caps the growing interval between checks of an
	// unavailable provider. Defaults to 5m.
	MaxHealthBackoff time.Duration

	// CleanupMaxRetries is how many failed attempts turn a cleanup task
	// FAILED. Defaults to 10.
	CleanupMaxRetries int
	// CleanupBatch is how many tasks one worker claims at a time. Defaults to 100.
	CleanupBatch int
	// CleanupConcurrency is how many provider deletes run at once. Defaults to 8.
	CleanupConcurrency int
	// ClaimTimeout is how long a claimed task is a worker's before another
	// may take it (the first hangs). A dead process's claims are released
	// sooner, by ReapTx. Defaults to 2m.
	ClaimTimeout time.Duration
	// ProcessID names this process (its peers id) on the tasks it claims.
	ProcessID string
	// PendingGrace is how old an intent (status PENDING) must be before the
	// sweep decides its request died and queues it for cleanup. It must
	// exceed the provider call timeout. Defaults to 2m.
	PendingGrace time.Duration
	// UnknownReportTTL is how long a NATS status report for an unknown
	// instance is retried before it is dropped. Defaults to 10m.
	UnknownReportTTL time.Duration

	// ResyncAfter is how long an instance in a transitional state
	// (PENDING, PROVISIONING, DELETING, UNKNOWN) may go without a status
	// before it is read back from its provider; while it stays so, the
	// reads back off from there (doubling) up to ResyncMaxBackoff.
	// Defaults to 30s; negative turns resync off (see RunResync).
	ResyncAfter time.Duration
	// ResyncSettledEvery is the longest a settled instance (RUNNING, COMPLETED,
	// FAILED) goes between two reads; each is read after a random time
	// between half of it and all of it, so they do not all come due at
	// once. Defaults to 10m; negative reads settled instances never.
	ResyncSettledEvery time.Duration
	// ResyncMaxBackoff caps the time between reads of an instance that
	// stays transitional, or whose provider fails to answer. Defaults to 5m.
	ResyncMaxBackoff time.Duration
	// ResyncBatch is how many due instances one claim takes. Defaults to 100.
	ResyncBatch int
}

// Service is the SP Resource Manager. It is safe for concurrent use.
type Service struct {
	cfg      Config
	log      *slog.Logger
	q        *queries
	metrics  *metrics
	registry registrySnapshot
	// cleanups hears of finished cleanup tasks (RecordCleanupsWith);
	// nil: none does. Set before the service runs.
	cleanups CleanupRecorder
}

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.DB == nil || cfg.Providers == nil || cfg.Specs == nil {
		panic("sprm: Config.DB, Config.Providers and Config.Specs are required")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	cfg.Egress = cmp.Or(cfg.Egress, egress.New(nil))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.HealthInterval = cmp.Or(cfg.HealthInterval, 10*time.Second)
	cfg.SlowThreshold = cmp.Or(cfg.SlowThreshold, time.Second)
	cfg.FailureThreshold = cmp.Or(cfg.FailureThreshold, 3)
	cfg.MaxHealthBackoff = cmp.Or(cfg.MaxHealthBackoff, 5*time.Minute)
	cfg.CleanupMaxRetries = cmp.Or(cfg.CleanupMaxRetries, 10)
	cfg.CleanupBatch = cmp.Or(cfg.CleanupBatch, 100)
	cfg.CleanupConcurrency = cmp.Or(cfg.CleanupConcurrency, 8)
	cfg.ClaimTimeout = cmp.Or(cfg.ClaimTimeout, 2*time.Minute)
	cfg.PendingGrace = cmp.Or(cfg.PendingGrace, 2*time.Minute)
	cfg.UnknownReportTTL = cmp.Or(cfg.UnknownReportTTL, 10*time.Minute)
	cfg.ResyncAfter = cmp.Or(cfg.ResyncAfter, 30*time.Second)
	cfg.ResyncSettledEvery = cmp.Or(cfg.ResyncSettledEvery, 10*time.Minute)
	cfg.ResyncMaxBackoff = cmp.Or(cfg.ResyncMaxBackoff, 5*time.Minute)
	cfg.ResyncBatch = cmp.Or(cfg.ResyncBatch, 100)
	return &Service{
		cfg:     cfg,
		log:     cfg.Logger.With("component", "sprm"),
		q:       newQueries(cfg.DB.Engine()),
		metrics: newMetrics(cfg.Registerer),
	}
}

func (s *Service) now() time.Time { return store.Now(s.cfg.Now) }
