// Package server is Steward's composition root: it builds every service from
// one Config, wires the domains' interfaces, starts them in dependency order
// and stops them in reverse (STYLE §1, §8). Tests build exactly what
// production runs through it (internal/httpapi/apitest).
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stewardhq/steward/internal/adapterstatus"
	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/background"
	"github.com/stewardhq/steward/internal/catalog"
	"github.com/stewardhq/steward/internal/console"
	"github.com/stewardhq/steward/internal/credentials"
	"github.com/stewardhq/steward/internal/events"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/jobs"
	"github.com/stewardhq/steward/internal/lifecycle"
	"github.com/stewardhq/steward/internal/live"
	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/peers"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/policy"
	"github.com/stewardhq/steward/internal/processprovider"
	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/repair"
	"github.com/stewardhq/steward/internal/sentinel"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tokens"
)

// Config is everything `steward server` can be told. The zero value with
// Dev set and a DataDir is a working single-process server.
type Config struct {
	// Dev runs without authentication (every request is the "dev" user in
	// the "default" project) and says so loudly at start.
	Dev bool
	// Listen is the HTTP address. Defaults to 127.0.0.1:8080; port 0 picks a free one.
	Listen string
	// DataDir holds the SQLite database and the embedded NATS store.
	// Defaults to ./steward-data.
	DataDir string
	// DatabaseURL selects PostgreSQL instead of SQLite in DataDir.
	DatabaseURL string
	// NATSURL selects an external NATS server instead of the embedded one.
	NATSURL string
	// APIToken is a static administrator bearer token. Without it, and
	// without Dev, the store must hold an admin token (buildTokens).
	APIToken string
	// TrustedProxies are the proxies in front of the server: only a request
	// from one of them has its client address taken from X-Forwarded-For
	// (for the failed-authentication limits and the access log). Defaults
	// to none.
	TrustedProxies []netip.Prefix
	// AuthFailureBurst is how many failed authentications one credential,
	// and one client address, may have at once before further failures are
	// answered 429. Defaults to 20.
	AuthFailureBurst int
	// AuthFailureEvery is how often one more failure is allowed after the
	// burst. Defaults to 1s.
	AuthFailureEvery time.Duration
	// Logger receives every log line. Defaults to discarding them.
	Logger *slog.Logger
	// RequestLogLevel is the level of the line logged per request (the
	// access log). Defaults to info, the zero Level; `steward server
	// --dev` sets debug unless --log-requests.
	RequestLogLevel slog.Level
	// TraceExporter turns on OpenTelemetry tracing: "stdout" writes spans to
	// standard error. Defaults to "" (off).
	TraceExporter string
	// IdempotencyRetention is how long Idempotency-Key answers are kept.
	// Defaults to 24h.
	IdempotencyRetention time.Duration
	// PruneInterval is how often expired idempotency keys are deleted.
	// Defaults to 10m.
	PruneInterval time.Duration
	// ShutdownTimeout bounds a graceful stop, after the drain delay.
	// Defaults to 20s.
	ShutdownTimeout time.Duration
	// DrainDelay is how long Run keeps serving after it is told to stop,
	// with /readyz answering 503, so that load balancers take the replica
	// out before its listener closes. 0: none.
	DrainDelay time.Duration
	// Hurry, when it closes during the drain delay, cuts it short (a
	// second signal).
	Hurry <-chan struct{}
	// Migrate says what to do with a schema behind this build: "auto"
	// (the default) applies the migrations, "check" refuses to start.
	Migrate string

	// HealthInterval is the time between health checks of a provider.
	// Defaults to 10s.
	HealthInterval time.Duration
	// ProviderFailureThreshold is how many failed checks in a row make a
	// provider unavailable. Defaults to 3.
	ProviderFailureThreshold int
	// ProviderTimeout bounds every call to a provider. Defaults to 10s.
	ProviderTimeout time.Duration
	// ProviderAllowCIDRs are the private and loopback prefixes Steward may
	// call providers in, at registration and on every connection
	// (package egress); link-local and metadata addresses are never
	// called, public ones always may be. Nil defaults to loopback
	// (egress.DefaultAllow); empty opens none.
	ProviderAllowCIDRs []netip.Prefix
	// RehydrationCopyTimeout bounds a rehydration's copy of its data
	// (placement.Config.CopyTimeout); 0: an hour.
	RehydrationCopyTimeout time.Duration
	// CleanupInterval is the time between passes of the cleanup worker.
	// Defaults to 10s; negative turns the worker off (benchmarks that run
	// passes themselves).
	CleanupInterval time.Duration
	// CleanupMaxRetries is how many failed attempts turn a cleanup task
	// FAILED. Defaults to 10.
	CleanupMaxRetries int
	// ResyncAfter is how long an instance in a transitional state may go
	// without a status before it is read back from its provider (then
	// again with backoff until it settles). Defaults to 30s; negative
	// turns resync off.
	ResyncAfter time.Duration
	// ResyncSettledEvery is the longest a settled instance goes between
	// two reads from its provider (spread over time). Defaults to 10m;
	// negative reads settled instances never.
	ResyncSettledEvery time.Duration

	// TombstoneRetention is how long a removed order stays readable as a
	// tombstone before it is purged. Defaults to 30 days (AIP-164).
	TombstoneRetention time.Duration
	// TombstonePurgeInterval is how often expired tombstones are purged.
	// Defaults to 10m.
	TombstonePurgeInterval time.Duration
	// DeletionStuckAfter is how long an order may wait at its deletion gate
	// before it counts as stuck (Ready reason DeletionStuck, and the
	// stuck-deletion metrics). Defaults to 10m.
	DeletionStuckAfter time.Duration

	// PolicyRefreshInterval is how often each replica checks for policy
	// changes made on another. Defaults to 2s.
	PolicyRefreshInterval time.Duration

	// PeerInterval is how often this process renews its lease among the
	// processes sharing the store and looks for dead ones to take over
	// from. Defaults to 1s; a peer on another host is dead after 5 intervals.
	PeerInterval time.Duration

	// PauseJobs runs no background jobs: work is queued and stays queued
	// until a server without it starts (maintenance; restart tests).
	PauseJobs bool

	// ProcessProvider runs the reference process provider in-process and
	// registers it as "process-sp", so orders of `container` start real
	// processes with nothing else installed (on by default with --dev).
	// Only with Dev, or ProcessProviderNoOp: its processes would run with
	// the server's privileges, able to read and write the server's own
	// store. Elsewhere it runs as `steward provider process`, under a user
	// of its own.
	ProcessProvider bool
	// DevCatalog seeds the dev catalog (as ProcessProvider does) for a
	// process provider that runs beside the server
	// (`steward provider process`).
	DevCatalog bool
	// ProcessProviderAllowCommands are the commands that provider runs
	// (processprovider.Config.AllowCommands). Defaults to the dev catalog's.
	ProcessProviderAllowCommands []string
	// ProcessProviderNoOp makes that provider accept orders without
	// starting processes (benchmarks).
	ProcessProviderNoOp bool

	// SentinelInterval is the time between the sentinel's decision cycles
	// (issue 11). Defaults to 5s; negative runs no sentinel in this process
	// (one runs as `steward sentinel` instead).
	SentinelInterval time.Duration
	// SentinelDebounce is how long after a reconcile event a not-ready
	// order gets another. Defaults to 10s.
	SentinelDebounce time.Duration
	// SentinelMaxAge is how long after a reconcile event any order gets
	// another. Defaults to 30m.
	SentinelMaxAge time.Duration
	// SentinelDecision replaces the sentinel's default message_decision.
	SentinelDecision *sentinel.Decision
	// NATSListen makes the embedded NATS server accept clients on this
	// address too ("127.0.0.1:4222"), for adapters running as their own
	// processes. Empty listens on no socket. Beyond 127.0.0.1 it needs
	// NATSToken.
	NATSListen string
	// NATSStreamReplicas is how many servers of the NATS cluster at NATSURL
	// keep Steward's stream: 3 survives losing one. Defaults to 1; more
	// needs NATSURL.
	NATSStreamReplicas int
	// NATSToken is required of every client of the embedded NATS server
	// (nats://TOKEN@host:port) when set.
	NATSToken string

	// PprofListen serves Go's profiling endpoints on this address when set
	// (e.g. 127.0.0.1:6060), without authentication: for measurements.
	PprofListen string
	// MetricsListen, when set, serves /metrics on this address only (a
	// listener of its own, stopped as gracefully as the API's), and the
	// API's listener answers it 404. Empty serves it on Listen.
	MetricsListen string
}

// Server is a running Steward control plane. Build it with [New], then
// Start and Stop it once.
type Server struct {
	cfg    Config
	logger *slog.Logger

	db         *store.DB
	peers      *peers.Registry
	nats       *events.EmbeddedServer
	bus        *events.Bus
	relay      *events.Relay
	live       *live.Feed // order changes, for the console's live pages
	console    *console.Console
	jobs       *jobs.Client
	tracing    *tracing
	operations *operations.Service
	sprm       *sprm.Service
	catalog    *catalog.Service
	// orders are the orders' reads the domains share.
	orders    *order.Store
	placement *placement.Service
	policy    *policy.Service
	lifecycle *lifecycle.Service
	repair    *repair.Service
	// credentials answers an order's credentials by asking its provider.
	credentials *credentials.Service
	// providerHTTP carries every call to a provider.
	providerHTTP *http.Client
	sentinel     *sentinel.Service
	// adapterStatus stores adapters' reports on orders.
	adapterStatus *adapterstatus.Service
	audit         *audit.Service
	tokens        *tokens.Service
	// providerToken is the in-process provider's service-account token,
	// made at each start and known only to this process.
	providerToken string
	stopStatus    func()
	idempotency   *httpapi.IdempotencyStore
	api           *httpapi.API
	registry      *prometheus.Registry
	checks        []healthCheck

	processProvider *processprovider.Daemon
	resync          background.Loop // reads instances back from their providers
	reconciles      *reconcile.Queue

	// lock holds the data directory while the server runs (see claim).
	lock *dataDirLock
	// listener, metricsListener and pprofListener are bound by claim,
	// before anything else starts, and served once the API is built.
	listener        net.Listener
	metricsListener net.Listener
	pprofListener   net.Listener
	http            *http.Server
	metrics         *http.Server // nil unless Config.MetricsListen
	pprof           *http.Server
	served          chan error
	metricsServed   chan error

	// draining turns /readyz to 503: the server is stopping.
	draining atomic.Bool

	stopOnce sync.Once
	stopErr  error
}

// New checks cfg and returns a Server that is not started.
func New(cfg Config) (*Server, error) {
	cfg.Listen = cmp.Or(cfg.Listen, "127.0.0.1:8080")
	cfg.DataDir = cmp.Or(cfg.DataDir, "steward-data")
	cfg.ShutdownTimeout = cmp.Or(cfg.ShutdownTimeout, 20*time.Second)
	cfg.PruneInterval = cmp.Or(cfg.PruneInterval, 10*time.Minute)
	cfg.HealthInterval = cmp.Or(cfg.HealthInterval, 10*time.Second)
	cfg.CleanupInterval = cmp.Or(cfg.CleanupInterval, 10*time.Second)
	cfg.ProviderTimeout = cmp.Or(cfg.ProviderTimeout, 10*time.Second)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	switch store.MigrateMode(cfg.Migrate) {
	case "", store.MigrateAuto, store.MigrateCheck:
	default:
		return nil, fmt.Errorf("server: unknown migrate mode %q (want \"auto\" or \"check\")", cfg.Migrate)
	}
	if cfg.ProcessProvider && !cfg.Dev && !cfg.ProcessProviderNoOp {
		return nil, errors.New("server: the in-process process provider runs processes only with --dev (elsewhere " +
			"they would run as the server, able to reach its store): run `steward provider process` beside it, as a " +
			"user of its own, with a service account token, or give --process-provider-noop")
	}
	switch cfg.TraceExporter {
	case "", "stdout":
	default:
		return nil, fmt.Errorf("server: unknown trace exporter %q (want \"stdout\" or none)", cfg.TraceExporter)
	}
	return &Server{cfg: cfg, logger: cfg.Logger}, nil
}

// Start locks the data directory and binds the listeners, then opens the
// store (migrating it), starts the event bus, the job runner and the HTTP
// server, and returns once the API answers. A data directory another server
// holds or an address in use fails it at once, before any other work and
// without a log line; on a later error it stops whatever it had started.
func (s *Server) Start(ctx context.Context) (err error) {
	started := time.Now()
	if err := s.claim(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = s.Stop(context.WithoutCancel(ctx))
		}
	}()
	if s.cfg.Dev {
		s.logger.Warn("DEVELOPMENT MODE: authentication is OFF; every request acts as user \"dev\" in project \"default\". Never expose this server.")
	}
	if err := s.startStore(ctx); err != nil {
		return err
	}
	if err := s.startEvents(ctx); err != nil {
		return err
	}
	if err := s.buildServices(ctx); err != nil {
		return err
	}
	if err := s.live.Start(ctx); err != nil {
		return fmt.Errorf("server: hear order changes: %w", err)
	}
	if s.stopStatus, err = s.sprm.ConsumeStatus(ctx, s.bus); err != nil {
		return fmt.Errorf("server: consume provider status events: %w", err)
	}
	// Before any job runs: what a dead earlier incarnation held (running
	// jobs, in-flight Idempotency-Keys) is taken over now.
	if err := s.peers.Start(ctx); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if err := s.jobs.Start(ctx); err != nil {
		return fmt.Errorf("server: start jobs: %w", err)
	}
	s.startResync(ctx)
	if !s.cfg.PauseJobs { // reconciles are jobs too
		if err := s.reconciles.Start(ctx, reconcileWorkers, s.lifecycle.Reconcile); err != nil {
			return fmt.Errorf("server: start reconciles: %w", err)
		}
	}
	if err := s.relay.Start(ctx); err != nil {
		return fmt.Errorf("server: start event relay: %w", err)
	}
	if s.sentinel != nil {
		if err := s.sentinel.Start(ctx); err != nil {
			return fmt.Errorf("server: %w", err)
		}
	}
	// Every replica keeps its own compiled policy set fresh (not a leader job).
	if err := s.policy.Start(ctx); err != nil {
		return fmt.Errorf("server: load policies: %w", err)
	}
	if err := s.startHTTP(); err != nil {
		return err
	}
	s.startMetrics()
	if err := s.startPprof(); err != nil {
		return err
	}
	if s.cfg.ProcessProvider || s.cfg.DevCatalog {
		// Something to order from the catalog, realised by this provider
		// (or one beside the server).
		if err := s.seedDevCatalog(ctx); err != nil {
			return err
		}
	}
	if s.cfg.ProcessProvider {
		// It registers through the real API, like any provider would.
		s.processProvider = processprovider.NewDaemon(processprovider.DaemonConfig{
			StewardURL: s.URL(), Token: s.providerToken, NoOp: s.cfg.ProcessProviderNoOp,
			AllowCommands: s.cfg.ProcessProviderAllowCommands,
			// --dev runs it in-process as whoever runs the server, root
			// included: what the development mode gives up
			// (docs/security.md).
			AllowRoot: true,
			WorkDir:   filepath.Join(s.cfg.DataDir, "process-provider"), Logger: s.logger,
		})
		if err := s.processProvider.Start(ctx); err != nil {
			return fmt.Errorf("server: start the process provider: %w", err)
		}
	}
	attrs := []any{"url", s.URL(), "engine", s.db.Engine(), "dev", s.cfg.Dev, "startup_ms", time.Since(started).Milliseconds()}
	if u := s.NATSURL(); u != "" {
		attrs = append(attrs, "nats_url", u) // for adapters: --nats-listen may have picked the port
	}
	s.logger.Info("steward started", attrs...)
	return nil
}

// Migrators are the migrations a server runs after Steward's own: River's.
func Migrators() []store.Migrator { return []store.Migrator{jobs.Migrator()} }

func (s *Server) startStore(ctx context.Context) error {
	db, err := store.Open(ctx, store.Config{
		DatabaseURL: s.cfg.DatabaseURL,
		DataDir:     s.cfg.DataDir,
		Migrators:   Migrators(),
		Migrate:     store.MigrateMode(s.cfg.Migrate),
		Logger:      s.logger.With("component", "store"),
	})
	var behind *store.BehindError
	if errors.As(err, &behind) {
		return fmt.Errorf("server: %w; run `steward migrate` with the same --database-url (or --data-dir) first, "+
			"or start with --migrate=auto", err)
	}
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.db = db
	s.checks = append(s.checks, healthCheck{"database", db.Ping})
	s.peers = peers.New(peers.Config{DB: db, Logger: s.logger.With("component", "peers"),
		Interval: s.cfg.PeerInterval})
	return nil
}

func (s *Server) startEvents(ctx context.Context) error {
	if s.cfg.NATSURL == "" && s.cfg.NATSStreamReplicas > 1 {
		return errors.New("server: --nats-stream-replicas above 1 needs a NATS cluster (--nats-url)")
	}
	busCfg := events.Config{Logger: s.logger, URL: s.cfg.NATSURL, Replicas: s.cfg.NATSStreamReplicas}
	if _, warnings := s.eventsScope(); len(warnings) > 0 {
		s.logger.Warn(warnings[0])
	}
	if s.cfg.NATSURL == "" {
		ecfg := events.EmbeddedConfig{StoreDir: filepath.Join(s.cfg.DataDir, "nats"), Logger: s.logger}
		ecfg.Token = s.cfg.NATSToken
		if s.cfg.NATSListen != "" {
			host, port, err := natsListenAddr(s.cfg.NATSListen, s.cfg.NATSToken != "")
			if err != nil {
				return fmt.Errorf("server: --nats-listen: %w", err)
			}
			ecfg.Listen, ecfg.Host, ecfg.Port = true, host, port
		}
		s.nats = events.NewEmbeddedServer(ecfg)
		if err := s.nats.Start(ctx); err != nil {
			return fmt.Errorf("server: start embedded NATS: %w", err)
		}
		busCfg.Embedded = s.nats
	}
	s.bus = events.New(busCfg)
	if err := s.bus.Start(ctx); err != nil {
		return fmt.Errorf("server: connect to NATS: %w", err)
	}
	s.checks = append(s.checks, healthCheck{"events", s.bus.Check})
	s.relay = events.NewRelay(events.RelayConfig{DB: s.db, Bus: s.bus, Logger: s.logger})
	return nil
}

// startHTTP serves the API on the listener claim bound.
func (s *Server) startHTTP() error {
	ln := s.listener
	s.http = NewHTTPServer(s.api, s.logger)
	// The console's live streams end at once on Shutdown, which waits
	// for every request.
	s.http.RegisterOnShutdown(s.console.Close)
	s.served = make(chan error, 1)
	go func() { s.served <- s.http.Serve(ln) }()
	return nil
}

// startMetrics serves /metrics on the listener of its own that claim bound
// for Config.MetricsListen, if any: a scraper reaches it there, and the
// API's listener (what a load balancer or an ingress exposes) no longer
// serves it.
func (s *Server) startMetrics() {
	ln := s.metricsListener
	if ln == nil {
		return
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metricsHandler())
	s.metrics = NewHTTPServer(mux, s.logger)
	s.metricsServed = make(chan error, 1)
	go func() { s.metricsServed <- s.metrics.Serve(ln) }()
}

// MetricsURL is the base URL /metrics is served on when it has a listener
// of its own (Config.MetricsListen), else "".
func (s *Server) MetricsURL() string {
	if s.metricsListener == nil {
		return ""
	}
	return "http://" + s.metricsListener.Addr().String()
}

// NewHTTPServer returns the http.Server that serves Steward's API with h:
// its timeouts bound a slow client, and its errors go to logger as warnings.
// `steward bench floor` serves its fixed answer with the same settings.
func NewHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// URL is the base URL the API answers on (http://127.0.0.1:port).
func (s *Server) URL() string {
	if s.listener == nil {
		return ""
	}
	return "http://" + s.listener.Addr().String()
}

// Handler returns the HTTP handler (for in-process benchmarks).
func (s *Server) Handler() http.Handler { return s.api }

// Operations returns the operations service, for tests and for the domains
// that start operations.
func (s *Server) Operations() *operations.Service { return s.operations }

// DB returns the open store, for tests.
func (s *Server) DB() *store.DB { return s.db }

// Placement returns the placement service, for tests.
func (s *Server) Placement() *placement.Service { return s.placement }

// SPRM returns the SP Resource Manager, for tests.
func (s *Server) SPRM() *sprm.Service { return s.sprm }

// Lifecycle returns the lifecycle engine (for tests and tools).
func (s *Server) Lifecycle() *lifecycle.Service { return s.lifecycle }

// UndocumentedRoutes lists the routes the OpenAPI document does not describe
// (none should: their requests would go unvalidated).
func (s *Server) UndocumentedRoutes() []string { return s.api.Undocumented() }

// ProcessProvider returns the in-process provider, nil unless configured.
func (s *Server) ProcessProvider() *processprovider.Daemon { return s.processProvider }

// Bus returns the event bus, for tests.
func (s *Server) Bus() *events.Bus { return s.bus }

// NATSURL is the embedded NATS server's nats:// URL on 127.0.0.1 when it
// listens (Config.NATSListen), else "".
func (s *Server) NATSURL() string {
	if s.nats == nil {
		return ""
	}
	return s.nats.ClientURL()
}

// Sentinel returns the in-process sentinel, nil when it is turned off.
func (s *Server) Sentinel() *sentinel.Service { return s.sentinel }

// Stop shuts down in reverse order of start: HTTP (letting requests in
// flight finish), the relay, jobs (waiting for running ones), the bus, NATS
// and the store. It is idempotent and safe after a failed Start.
func (s *Server) Stop(ctx context.Context) error {
	s.draining.Store(true)
	s.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, s.cfg.ShutdownTimeout)
		defer cancel()
		var errs []error
		if s.processProvider != nil {
			errs = append(errs, s.processProvider.Stop(ctx))
		}
		if s.pprof != nil {
			errs = append(errs, s.pprof.Close())
		}
		if s.http != nil {
			errs = append(errs, s.http.Shutdown(ctx))
			if err := <-s.served; !errors.Is(err, http.ErrServerClosed) {
				errs = append(errs, err)
			}
		}
		// After the API's: scrapes go on answering while it drains.
		if s.metrics != nil {
			errs = append(errs, s.metrics.Shutdown(ctx))
			if err := <-s.metricsServed; !errors.Is(err, http.ErrServerClosed) {
				errs = append(errs, err)
			}
		}
		if s.policy != nil {
			errs = append(errs, s.policy.Stop(ctx))
		}
		if s.sentinel != nil {
			errs = append(errs, s.sentinel.Stop(ctx))
		}
		if s.relay != nil {
			errs = append(errs, s.relay.Stop(ctx))
		}
		s.stopResync(ctx)
		if s.reconciles != nil {
			errs = append(errs, s.reconciles.Stop(ctx))
		}
		if s.stopStatus != nil {
			s.stopStatus()
		}
		if s.live != nil {
			s.live.Stop()
		}
		if s.jobs != nil {
			errs = append(errs, s.jobs.Stop(ctx))
		}
		if s.peers != nil {
			// After the jobs stopped: a process that stopped holds nothing.
			errs = append(errs, s.peers.Stop(ctx))
		}
		if s.bus != nil {
			errs = append(errs, s.bus.Stop(ctx))
		}
		if s.nats != nil {
			errs = append(errs, s.nats.Stop(ctx))
		}
		if s.providerHTTP != nil {
			// After the jobs: no call is in flight. A stopped server
			// holds no connection to a provider.
			s.providerHTTP.CloseIdleConnections()
		}
		if s.tracing != nil {
			errs = append(errs, s.tracing.shutdown(ctx))
		}
		if s.db != nil {
			errs = append(errs, s.db.Close())
		}
		// Last: the data directory is free once nothing uses it.
		errs = append(errs, s.unclaim())
		s.stopErr = errors.Join(errs...)
		s.logger.Info("steward stopped", "error", s.stopErr)
	})
	return s.stopErr
}

// Run starts the server, serves until ctx ends (SIGTERM/SIGINT in `steward
// server`), then stops it gracefully.
func Run(ctx context.Context, cfg Config) error {
	s, err := New(cfg)
	if err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		s.drain()
	case err := <-s.served:
		s.served <- err // Stop reads it
		s.logger.Error("HTTP server failed", "error", err)
	}
	return s.Stop(context.WithoutCancel(ctx))
}

// drain turns /readyz to 503 and goes on serving for the drain delay (or
// until Hurry closes), so that whatever routes requests here stops before
// the listener closes and requests would be refused.
func (s *Server) drain() {
	s.draining.Store(true)
	if s.cfg.DrainDelay <= 0 {
		return
	}
	s.logger.Info("draining: /readyz answers 503, serving on until the drain delay ends", "drain_delay", s.cfg.DrainDelay)
	t := time.NewTimer(s.cfg.DrainDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.cfg.Hurry:
		s.logger.Info("told again to stop: the drain delay is cut short")
	}
}
