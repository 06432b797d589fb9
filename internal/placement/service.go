package placement

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/policy"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// evaluator runs the policy chain (*policy.Service).
type evaluator interface {
	Evaluate(ctx context.Context, p policy.EvaluateParams) (policy.Result, error)
}

// providerSource lists the registered providers with their loads (the
// SPRM's, adapted in internal/server).
type providerSource interface {
	AvailableProviders(ctx context.Context) ([]policy.ProviderInfo, error)
}

// provisioner creates and deletes instances on providers (*sprm.Service).
type provisioner interface {
	Create(ctx context.Context, p sprm.CreateParams) (sprm.Instance, error)
	Delete(ctx context.Context, project, id string, deferred bool) (sprm.Instance, error)
	Instance(ctx context.Context, project, id string, showDeleted bool) (sprm.Instance, error)
	// CleanupEnqueueTx queues the deferred deletion of an instance in tx,
	// without contacting its provider.
	CleanupEnqueueTx(ctx context.Context, tx *store.Tx, instanceID string) error
	// Abandon queues for cleanup an instance whose create outcome is
	// still unknown when its creator gives up.
	Abandon(ctx context.Context, instanceID string) error
	// Update changes an instance in place (sprm.ErrUpdateNotSupported when
	// its provider cannot).
	Update(ctx context.Context, p sprm.UpdateParams) (sprm.Instance, error)
	// CheckSpec asks a provider whether it would accept a spec (its
	// refusal is a *sprm.SpecRefusedError).
	CheckSpec(ctx context.Context, providerName string, spec map[string]any) error
	// ProviderSupportsTx reports whether a provider registered an
	// operation, read in tx.
	ProviderSupportsTx(ctx context.Context, tx *store.Tx, name, operation string) (bool, error)
	// ExportsData reports whether a rehydration from provider from to
	// provider to carries the data (both registered the export operation).
	ExportsData(ctx context.Context, from, to string) (bool, error)
	// BeginExport stops writes to an instance and grants its export.
	BeginExport(ctx context.Context, instanceID string) (provider.ExportSource, error)
	// EndExport lets an instance take writes again.
	EndExport(ctx context.Context, instanceID string) error
}

// operationRecorder starts and finishes operations in the caller's
// transaction (*operations.Service).
type operationRecorder interface {
	StartTx(ctx context.Context, tx *store.Tx, p operations.StartParams) (operations.Operation, error)
	FinishTx(ctx context.Context, tx *store.Tx, id string, p operations.FinishParams) (operations.Operation, error)
	ByRequestKey(ctx context.Context, project, key string) (operations.Operation, error)
}

// jobInserter queues River jobs in a transaction (*jobs.Client).
type jobInserter interface {
	InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) error
	// Pending reports whether a job of kind for the argument field's
	// value is still to be worked (not given up).
	Pending(ctx context.Context, q store.Querier, kind, field, value string) (bool, error)
}

// Config configures the Service. Every field but Logger, Now,
// MaxAttempts and RetryBackoff is required.
type Config struct {
	DB        *store.DB
	Policy    evaluator
	Providers providerSource
	SPRM      provisioner
	Jobs      jobInserter
	// Specs checks a spec changed by the policy chain against its service
	// type's schema. Defaults to no check.
	Specs specValidator
	// Changes records what becomes of orders' resources, in the
	// transaction that decides it, for the orders' reconciles
	// (*reconcile.Queue). Required for orders.
	Changes changeRecorder
	// Operations records the operations rehydrations answer with. Required
	// for rehydration.
	Operations operationRecorder
	Logger     *slog.Logger
	// Now reads the clock that dates every write. Job retries are not timed
	// by it but by River's own clock (see backoff). Defaults to time.Now.
	Now func() time.Time
	// JobQueue is the River queue of the jobs that call providers. They
	// wait on the network, not on this machine, so internal/server gives
	// them a queue with many workers (jobs.QueueProviders): a slow provider
	// then does not hold every job slot. Defaults to River's default queue.
	JobQueue string
	// MaxAttempts bounds the attempts of a provision or delete job.
	// Defaults to 8.
	MaxAttempts int
	// RetryBackoff is the wait before a job's second attempt; it doubles at
	// each attempt, up to a minute. Defaults to 1s.
	RetryBackoff time.Duration
	// CopyTimeout bounds a rehydration's wait for its new instance: one
	// still not RUNNING this long after its create (or its copy of the
	// data) began is given up and deleted, and the old one serves on (and
	// takes writes again). Defaults to an hour.
	CopyTimeout time.Duration
}

// Service is the Placement Manager. It is safe for concurrent use.
type Service struct {
	cfg Config
	log *slog.Logger
	q   *queries
}

// New returns a Service. It panics when a required Config field is missing.
func New(cfg Config) *Service {
	if cfg.DB == nil || cfg.Policy == nil || cfg.Providers == nil || cfg.SPRM == nil || cfg.Jobs == nil {
		panic("placement: Config.DB, Policy, Providers, SPRM and Jobs are required")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, 8)
	cfg.RetryBackoff = cmp.Or(cfg.RetryBackoff, time.Second)
	cfg.CopyTimeout = cmp.Or(cfg.CopyTimeout, time.Hour)
	return &Service{
		cfg: cfg,
		log: cfg.Logger.With("component", "placement"),
		q:   newQueries(cfg.DB.Engine()),
	}
}

// RegisterWorkers adds placement's River workers (provision, deprovision)
// to the registry the jobs client is built with.
func (s *Service) RegisterWorkers(w *river.Workers) {
	river.AddWorker(w, &provisionWorker{s: s})
	river.AddWorker(w, &deprovisionWorker{s: s})
	river.AddWorker(w, &rehydrateWorker{s: s})
	river.AddWorker(w, &updateWorker{s: s})
	river.AddWorker(w, &endExportWorker{s: s})
}

func (s *Service) now() time.Time { return store.Now(s.cfg.Now) }
