package processprovider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/background"
	"github.com/stewardhq/steward/pkg/provider"
)

// DaemonConfig configures a [Daemon]. StewardURL or StewardURLs is
// required, and WorkDir unless NoOp.
type DaemonConfig struct {
	// Name is the provider's registered name. Defaults to Name.
	Name string
	// Listen is the address the provider API listens on. Defaults to
	// 127.0.0.1:0 (a free port); the registration carries the real one.
	Listen string
	// StewardURL is where to register and report status.
	StewardURL string
	// StewardURLs are more base URLs of the same Steward (its replicas),
	// after StewardURL: registration and reports move on to the next when
	// one cannot be reached, and keep the one that answered.
	StewardURLs []string
	// Token authenticates to Steward; empty for a --dev server.
	Token string
	// WorkDir holds the processes' directories and the instances' records:
	// a Daemon started on the WorkDir of an earlier one adopts its
	// processes.
	WorkDir string
	// NoOp accepts orders without starting processes (benchmarks).
	NoOp bool
	// Metadata and Capacity are registered as they are. Metadata defaults to
	// {"region": "local"}.
	Metadata map[string]string
	Capacity map[string]int64
	Logger   *slog.Logger
}

// Daemon runs the process provider as a service provider: the provider API
// over HTTP (repairs included), registration with Steward (retried until
// accepted), and status, runtime and repair reports to Steward over HTTP. `steward provider process` runs one;
// `steward server --dev` runs one in-process.
type Daemon struct {
	cfg DaemonConfig
	log *slog.Logger

	mu         sync.Mutex
	provider   *Provider
	http       *http.Server
	listener   net.Listener
	served     chan error
	registered chan struct{}
	// registration registers with Steward, retrying until accepted.
	registration background.Loop

	stopOnce sync.Once
	stopErr  error
}

// NewDaemon returns a Daemon that is not started.
func NewDaemon(cfg DaemonConfig) *Daemon {
	cfg.Name = cmp.Or(cfg.Name, Name)
	cfg.Listen = cmp.Or(cfg.Listen, "127.0.0.1:0")
	if cfg.Metadata == nil {
		cfg.Metadata = map[string]string{"region": "local"}
	}
	log := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).With("component", "processprovider", "provider", cfg.Name)
	return &Daemon{cfg: cfg, log: log, registered: make(chan struct{})}
}

// Start listens, takes over the instances an earlier provider recorded in
// WorkDir ([Provider.Restore]), serves the provider API and starts
// registering with Steward in the background; it returns once the API
// listens.
func (d *Daemon) Start(ctx context.Context) error {
	if d.cfg.StewardURL == "" && len(d.cfg.StewardURLs) == 0 {
		return errors.New("processprovider: a Steward URL is required")
	}
	ln, err := net.Listen("tcp", d.cfg.Listen)
	if err != nil {
		return fmt.Errorf("processprovider: listen on %s: %w", d.cfg.Listen, err)
	}
	reporter := &provider.HTTPReporter{StewardURL: d.cfg.StewardURL, StewardURLs: d.cfg.StewardURLs, Token: d.cfg.Token}
	// The reporter's token is the provider's; repair reports carry each
	// operation's own (HTTPReporter.ReportRepair).
	p := New(&Config{Reporter: reporter, Runtime: reporter, Logger: d.cfg.Logger, WorkDir: d.cfg.WorkDir, NoOp: d.cfg.NoOp})
	// Before the API serves: what an earlier provider on this WorkDir left
	// running is adopted (or restarted) and reported, and held by id.
	restored, err := p.Restore(ctx)
	if err != nil {
		ln.Close()
		return errors.Join(err, p.Stop(context.WithoutCancel(ctx)))
	}
	if restored > 0 {
		d.log.Info("restored the instances of an earlier provider", "instances", restored, "work_dir", d.cfg.WorkDir)
	}
	registrar, err := provider.NewRegistrar(provider.RegistrarConfig{
		StewardURL: d.cfg.StewardURL, StewardURLs: d.cfg.StewardURLs, Token: d.cfg.Token, Logger: d.log,
		Registration: provider.Registration{
			Name: d.cfg.Name, Endpoint: "http://" + ln.Addr().String(), ServiceTypes: slices.Clone(serviceTypes),
			Metadata: d.cfg.Metadata, Capacity: d.cfg.Capacity,
			// Provider implements Updater and Repairer.
			Operations: []string{provider.OperationUpdate, provider.OperationRepair},
		},
	})
	if err != nil {
		ln.Close()
		return fmt.Errorf("processprovider: %w", err)
	}
	srv := &http.Server{Handler: provider.NewServer(p, provider.ServerConfig{Logger: d.log}), ReadHeaderTimeout: 10 * time.Second}

	d.mu.Lock()
	d.provider, d.http, d.listener = p, srv, ln
	d.served = make(chan error, 1)
	d.mu.Unlock()

	go func() { d.served <- srv.Serve(ln) }()
	return d.registration.Start(ctx, func(regCtx context.Context) {
		reg, err := registrar.Register(regCtx)
		if err != nil {
			if regCtx.Err() == nil {
				d.log.Error("registration with Steward failed", "error", err)
			}
			return
		}
		d.log.Info("registered with Steward", "id", reg.ID, "endpoint", reg.Endpoint, "no_op", d.cfg.NoOp)
		close(d.registered)
	})
}

// Registered is closed once Steward accepted the registration.
func (d *Daemon) Registered() <-chan struct{} { return d.registered }

// URL is the provider API's base URL ("" before Start).
func (d *Daemon) URL() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.listener == nil {
		return ""
	}
	return "http://" + d.listener.Addr().String()
}

// Stop stops registering, stops supervising (every process keeps running,
// recorded for the next Daemon on the same WorkDir; see [Provider.Stop]),
// then the API. It is idempotent and safe before Start.
func (d *Daemon) Stop(ctx context.Context) error {
	d.mu.Lock()
	p, srv := d.provider, d.http
	d.mu.Unlock()
	if srv == nil {
		return nil
	}
	d.stopOnce.Do(func() {
		// Registration ends as soon as it is cancelled; it is waited for
		// whatever ctx says, so that nothing registers once stopped.
		_ = d.registration.Stop(context.WithoutCancel(ctx))
		errs := []error{p.Stop(ctx), srv.Shutdown(ctx)}
		if err := <-d.served; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
		d.stopErr = errors.Join(errs...)
	})
	return d.stopErr
}

// Name is the name the provider registers under unless told otherwise.
const Name = "process-sp"

// serviceTypes are the service types the provider registers for: plain
// containers, process clusters, whose orders list spec.members, and the dev
// catalog's namespaced-process (a container spec whose type requires the
// example adapter).
var serviceTypes = []string{"container", "process-cluster", "namespaced-process"}
