package server

import (
	"cmp"
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/api"
	"github.com/stewardhq/steward/internal/adapterstatus"
	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/catalog"
	"github.com/stewardhq/steward/internal/console"
	"github.com/stewardhq/steward/internal/credentials"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/jobs"
	"github.com/stewardhq/steward/internal/lifecycle"
	"github.com/stewardhq/steward/internal/live"
	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/policy"
	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/repair"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// reconcileWorkers is how many order reconciles a replica runs at once.
// Each is a short transaction holding one order's lock; on SQLite the
// workers' writes share group commits, and 4 held a burst of orders'
// create-to-up rate to what 4 reconciles per commit could carry
// (BENCHMARKS.md).
const reconcileWorkers = 16

// periodicJobs are the passes the elected leader runs on a schedule; the
// services they call are built.
func (s *Server) periodicJobs() []jobs.Periodic {
	periodic := []jobs.Periodic{
		{Name: "idempotency_prune", Interval: s.cfg.PruneInterval, RunOnStart: true,
			Run: counted(s.logger, slog.LevelInfo, "pruned expired idempotency keys", s.idempotency.Prune)},
		// Each pass checks the providers whose next check is due, so
		// running it more often than the interval only tightens timing.
		{Name: "provider_health", Interval: max(s.cfg.HealthInterval/2, 100*time.Millisecond), RunOnStart: true,
			Run: s.sprm.CheckHealth},
		// After a given-up job (see placement.SweepStalled); 30s is well
		// inside its one-minute horizon.
		{Name: "placement_stalled", Interval: 30 * time.Second,
			Run: counted(s.logger, slog.LevelWarn, "finished work whose job was given up", s.placement.SweepStalled)},
		// The deletion gate is checked by the order's reconcile, asked for
		// by each adapter report and each child's removal; the sweep is the
		// resync of last resort (issue 9).
		{Name: "deletion_gate", Interval: 30 * time.Second,
			Run: counted(s.logger, slog.LevelInfo, "deletion gate sweep removed orders", s.lifecycle.SweepDeletions)},
		{Name: "tombstone_purge", Interval: cmp.Or(s.cfg.TombstonePurgeInterval, 10*time.Minute), RunOnStart: true,
			Run: counted(s.logger, slog.LevelInfo, "purged expired tombstones", s.lifecycle.PurgeTombstones)},
		// A session is refused once expired whether swept or not; the
		// sweep keeps the table to the live ones.
		{Name: "console_session_sweep", Interval: 10 * time.Minute, RunOnStart: true,
			Run: counted(s.logger, slog.LevelInfo, "swept expired console sessions", s.tokens.SweepSessions)},
		{Name: "repair_silent", Interval: time.Minute,
			Run: counted(s.logger, slog.LevelWarn, "failed repair operations whose worker went silent", s.repair.SweepSilent)},
	}
	if s.cfg.CleanupInterval > 0 {
		periodic = append(periodic, jobs.Periodic{Name: "cleanup", Interval: s.cfg.CleanupInterval, RunOnStart: true, Run: s.runCleanup})
	}
	return periodic
}

// buildServices builds the domains and the HTTP API over the open store.
func (s *Server) buildServices(ctx context.Context) error {
	var err error
	if s.tracing, err = newTracing(s.cfg.TraceExporter); err != nil {
		return err
	}
	table := problems()
	s.operations = operations.New(operations.Config{DB: s.db, ErrorBody: table.Render})
	s.idempotency = httpapi.NewIdempotencyStore(httpapi.IdempotencyConfig{
		DB: s.db, Logger: s.logger, Retention: s.cfg.IdempotencyRetention, Holder: s.peers.ID(),
	})
	s.peers.AddReaper("idempotency keys", s.idempotency.ReapTx)
	s.peers.AddReaper("jobs", jobs.Reap)
	s.registry = prometheus.NewRegistry()
	s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	serviceTypes, err := catalog.NewServiceTypes(s.db)
	if err != nil {
		return err
	}
	// The orders' reads every domain shares; the lifecycle writes them.
	s.orders = order.New(order.Config{DB: s.db, ServiceType: serviceTypes.OrderType})
	endpoints := egress.New(s.cfg.ProviderAllowCIDRs)
	s.providerHTTP = providerHTTPClient(endpoints)
	providers := provider.NewClient(provider.ClientConfig{Timeout: s.cfg.ProviderTimeout, HTTPClient: s.providerHTTP})
	// What happens below the lifecycle is recorded there, per order, and
	// the lifecycle's reconcile reads it (status flows one way, DESIGN §2).
	s.reconciles = reconcile.New(s.db, s.logger.With("component", "reconcile"))
	s.sprm = sprm.New(sprm.Config{
		DB:                 s.db,
		Providers:          providers,
		Specs:              serviceTypes,
		Changes:            s.reconciles,
		Logger:             s.logger,
		Registerer:         s.registry,
		Egress:             endpoints,
		HealthInterval:     s.cfg.HealthInterval,
		FailureThreshold:   s.cfg.ProviderFailureThreshold,
		CleanupMaxRetries:  s.cfg.CleanupMaxRetries,
		ProcessID:          s.peers.ID(),
		ResyncAfter:        s.cfg.ResyncAfter,
		ResyncSettledEvery: s.cfg.ResyncSettledEvery,
	})
	s.peers.AddReaper("cleanup claims", s.sprm.ReapTx)
	s.peers.AddReaper("resync claims", s.sprm.ReapResyncTx)
	s.policy = policy.New(policy.Config{DB: s.db, Logger: s.logger, RefreshInterval: s.cfg.PolicyRefreshInterval,
		Providers: policy.ProviderSourceFunc(s.availableProviders)})
	s.placement = placement.New(placement.Config{
		DB: s.db, Policy: s.policy, Providers: policy.ProviderSourceFunc(s.availableProviders), SPRM: s.sprm,
		Jobs: lazyJobs{s}, JobQueue: jobs.QueueProviders, Logger: s.logger, Specs: serviceTypes,
		Changes: s.reconciles, Operations: s.operations, CopyTimeout: s.cfg.RehydrationCopyTimeout,
	})
	s.catalog = catalog.New(catalog.Config{DB: s.db, ServiceTypes: serviceTypes, Orders: s.orders,
		Lifecycles: storedLifecycles{s}, Logger: s.logger})
	// The live pages hear of every change to what an order page shows.
	s.live = live.New(live.Config{Bus: s.bus, Logger: s.logger})
	s.adapterStatus = adapterstatus.New(adapterstatus.Config{DB: s.db, Orders: s.orders, Reconciles: s.reconciles,
		Logger: s.logger.With("component", "adapterstatus"), Registerer: s.registry, Changed: s.live.Changed})
	if err := s.buildTokens(ctx); err != nil {
		return err
	}
	s.repair = repair.New(repair.Config{DB: s.db, Orders: s.orders, Providers: repairProviders{s.sprm},
		Tokens: workerTokens{s.tokens}, Jobs: lazyJobs{s}, JobQueue: jobs.QueueProviders, Logger: s.logger,
		Client: providers, Changed: s.live.Changed})
	s.lifecycle = lifecycle.New(lifecycle.Config{DB: s.db, Orders: s.orders, Logger: s.logger, Catalog: s.catalog,
		Changed:   s.live.Changed,
		Placement: s.placement, Jobs: lazyJobs{s}, Reconciles: s.reconciles, Usage: s.catalog, Adapters: s.adapterStatus,
		Runtimes: runtimeHealths{s.repair}, Outputs: s.sprm, Cleanups: orderCleanups{s.sprm}, TombstoneRetention: s.cfg.TombstoneRetention, DeletionStuckAfter: s.cfg.DeletionStuckAfter})
	// A finished cleanup of an order's instance is logged on the order.
	s.sprm.RecordCleanupsWith(cleanupLog{s.lifecycle})
	s.registry.MustRegister(s.lifecycle.DeletionMetrics())
	if err := s.buildSentinel(); err != nil {
		return err
	}
	s.credentials = credentials.New(credentials.Config{DB: s.db, Orders: placedOrders{s.lifecycle}, Providers: s.sprm,
		Client: providers, Operations: s.operations, Jobs: lazyJobs{s}, JobQueue: jobs.QueueProviders, Logger: s.logger})
	workers := jobs.NewWorkers()
	s.credentials.RegisterWorkers(workers)
	s.placement.RegisterWorkers(workers)
	s.lifecycle.RegisterWorkers(workers)
	s.repair.RegisterWorkers(workers)
	s.jobs, err = jobs.New(jobs.Config{DB: s.db, Logger: s.logger.With("component", "jobs"), Periodic: s.periodicJobs(),
		Workers: workers, Paused: s.cfg.PauseJobs, ID: s.peers.ID()})
	if err != nil {
		return err
	}

	spec, err := openAPI()
	if err != nil {
		return err
	}
	s.audit = audit.New(s.db)
	// Every replica on the database signs page tokens with its key, so
	// one client's pages may come from any of them.
	pageKey, err := httpapi.LoadPageKey(ctx, s.db)
	if err != nil {
		return err
	}
	s.api, err = httpapi.New(httpapi.Config{
		Audit:           s.audit,
		Logger:          s.logger.With("component", "http"),
		RequestLogLevel: s.cfg.RequestLogLevel,
		Problems:        table,
		Auth:            s.tokens,
		Spec:            spec.doc,
		Idempotency:     s.idempotency,
		Registerer:      s.registry,
		Tracer:          s.tracing.tracer(),
		PageKey:         pageKey,
		AuthFailures:    httpapi.NewFailureLimiter(s.cfg.AuthFailureBurst, s.cfg.AuthFailureEvery),
		TrustedProxies:  s.cfg.TrustedProxies,
	})
	if err != nil {
		return err
	}
	s.api.HandlePublic("GET /api/v1/health", s.handleHealth)
	// The probes are infrastructure, like /metrics: outside the versioned
	// API and its OpenAPI document, open, and never rate limited.
	s.api.HandleRaw("GET /livez", probeHandler(s.handleLive))
	s.api.HandleRaw("GET /readyz", probeHandler(s.handleReady))
	s.api.HandlePublic("GET /api/v1/openapi.json", func(w http.ResponseWriter, _ *http.Request) error {
		w.Header().Set("Content-Type", "application/json")
		_, err := w.Write(spec.json)
		return err
	})
	if s.cfg.MetricsListen == "" {
		s.api.HandleRaw("GET /metrics", s.metricsHandler())
	}
	s.console = console.New(console.Config{API: s.api, Logger: s.logger, Changes: s.live,
		Sessions: consoleSessions{s.tokens}, Open: s.cfg.Dev})
	s.console.Routes(s.api)
	s.operations.Routes(s.api)
	s.sprm.Routes(s.api)
	s.catalog.Routes(s.api)
	s.policy.Routes(s.api)
	s.lifecycle.Routes(s.api)
	s.adapterStatus.Routes(s.api)
	s.audit.Routes(s.api)
	s.tokens.Routes(s.api)
	s.placement.Routes(s.api)
	s.repair.Routes(s.api)
	s.credentials.Routes(s.api)
	return nil
}

// metricsHandler serves the Prometheus scrape: on the API's listener, or
// on one of its own (Config.MetricsListen).
func (s *Server) metricsHandler() http.Handler {
	return promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{})
}

// storedLifecycles lets the catalog ask the lifecycle, built after it (the
// lifecycle uses the catalog), whether a lifecycle is stored: it asks only
// while serving.
type storedLifecycles struct{ s *Server }

func (l storedLifecycles) LifecycleStored(ctx context.Context, id string) (bool, error) {
	return l.s.lifecycle.LifecycleStored(ctx, id)
}

// lazyJobs lets placement and the lifecycle enqueue through the jobs
// client, which is built after they have registered their workers.
type lazyJobs struct{ s *Server }

func (l lazyJobs) InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) error {
	return l.s.jobs.InsertTx(ctx, tx, args, opts)
}

func (l lazyJobs) Pending(ctx context.Context, q store.Querier, kind, field, value string) (bool, error) {
	return l.s.jobs.Pending(ctx, q, kind, field, value)
}

// loadedSpec is the API's OpenAPI document and its JSON rendering.
type loadedSpec struct {
	doc  *openapi3.T
	json []byte
}

// openAPI parses and checks the API's document once per process. It never
// changes and nothing writes to it (requests read it concurrently anyway);
// parsing it was most of a server's start under -race (580 ms of 900), and
// the tests start hundreds of servers in a process.
var openAPI = sync.OnceValues(func() (loadedSpec, error) {
	doc, rendered, err := httpapi.LoadSpec(context.Background(), api.OpenAPIYAML)
	return loadedSpec{doc, rendered}, err
})

// providerHTTPClient is the client of every call Steward makes to a
// provider (health, create, read, update, delete, credentials, repair,
// export): it connects only to addresses endpoints allows, checked after
// name resolution (finding 5, SSRF), and directly, never through an
// HTTP_PROXY, which would make the address checked the proxy's. It keeps
// as many idle connections per provider as calls run at once (the provider
// queue's workers): the default transport keeps 2, so under load every
// other call opened a new connection.
func providerHTTPClient(endpoints *egress.Policy) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = endpoints.DialContext(&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second})
	t.MaxIdleConns = 0 // no overall bound; the per-host one holds
	t.MaxIdleConnsPerHost = jobs.DefaultProviderWorkers
	return &http.Client{Transport: t}
}

// availableProviders gives the policy chain the registry's providers and loads.
func (s *Server) availableProviders(ctx context.Context) ([]policy.ProviderInfo, error) {
	loads, err := s.sprm.ProviderLoads(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]policy.ProviderInfo, len(loads))
	for i, l := range loads {
		out[i] = policy.ProviderInfo{Name: l.Name, ServiceTypes: l.ServiceTypes, Metadata: l.Metadata,
			Status: l.Status, Capacity: l.Capacity, LiveInstances: l.LiveInstances, Projects: l.Projects}
	}
	return out, nil
}

func (s *Server) runCleanup(ctx context.Context) error {
	res, err := s.sprm.RunCleanup(ctx)
	if res != (sprm.CleanupResult{}) {
		s.logger.InfoContext(ctx, "cleanup pass", "done", res.Done, "retried", res.Retried, "failed", res.Failed,
			"skipped", res.Skipped, "swept", res.Swept)
	}
	return err
}

// counted wraps a periodic sweep that returns how many things it handled,
// logging the count at level when there were any.
func counted[N int | int64](log *slog.Logger, level slog.Level, msg string,
	run func(context.Context) (N, error)) func(context.Context) error {
	return func(ctx context.Context) error {
		n, err := run(ctx)
		if n > 0 {
			log.Log(ctx, level, msg, "count", n)
		}
		return err
	}
}
