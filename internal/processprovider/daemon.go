package processprovider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"

	"github.com/stewardhq/steward/internal/providerhost"
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
	// AllowCommands are the commands it runs (Config.AllowCommands).
	// Defaults to DefaultAllowCommands.
	AllowCommands []string
	// AllowRoot lets it run processes as root: without it, a Daemon whose
	// process is root refuses to start (unless NoOp, which runs nothing).
	AllowRoot bool
	// Metadata and Capacity are registered as they are. Metadata defaults to
	// {"region": "local"}.
	Metadata map[string]string
	Capacity map[string]int64
	Logger   *slog.Logger
}

// Daemon runs the process provider as a service provider: the provider API
// over HTTP (repairs included), registration with Steward (retried until
// accepted; Registered, URL: its [providerhost.Host]), and status, runtime
// and repair reports to Steward over HTTP. `steward provider process` runs
// one; `steward server --dev` runs one in-process.
type Daemon struct {
	*providerhost.Host
	cfg DaemonConfig
	log *slog.Logger

	mu       sync.Mutex
	provider *Provider

	stopOnce sync.Once
	stopErr  error
}

// NewDaemon returns a Daemon that is not started.
func NewDaemon(cfg DaemonConfig) *Daemon {
	cfg.Name = cmp.Or(cfg.Name, Name)
	if cfg.Metadata == nil {
		cfg.Metadata = map[string]string{"region": "local"}
	}
	log := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).With("component", "processprovider", "provider", cfg.Name)
	host := providerhost.New(providerhost.Config{Listen: cfg.Listen, Logger: log,
		Registrar: provider.RegistrarConfig{
			StewardURL: cfg.StewardURL, StewardURLs: cfg.StewardURLs, Token: cfg.Token,
			Registration: provider.Registration{
				Name: cfg.Name, ServiceTypes: slices.Clone(serviceTypes), Metadata: cfg.Metadata, Capacity: cfg.Capacity,
				// Provider implements Updater and Repairer.
				Operations: []string{provider.OperationUpdate, provider.OperationRepair},
			},
		}})
	return &Daemon{Host: host, cfg: cfg, log: log}
}

// Start takes over the instances an earlier provider recorded in WorkDir
// ([Provider.Restore]), then listens, serves the provider API and starts
// registering with Steward in the background; it returns once the API
// listens.
func (d *Daemon) Start(ctx context.Context) error {
	if d.cfg.StewardURL == "" && len(d.cfg.StewardURLs) == 0 {
		return errors.New("processprovider: a Steward URL is required")
	}
	if os.Geteuid() == 0 && !d.cfg.AllowRoot && !d.cfg.NoOp {
		return ErrRunsAsRoot
	}
	reporter := &provider.HTTPReporter{StewardURL: d.cfg.StewardURL, StewardURLs: d.cfg.StewardURLs, Token: d.cfg.Token}
	// The reporter's token is the provider's; repair reports carry each
	// operation's own (HTTPReporter.ReportRepair).
	p := New(&Config{Reporter: reporter, Runtime: reporter, Logger: d.cfg.Logger, WorkDir: d.cfg.WorkDir, NoOp: d.cfg.NoOp,
		AllowCommands: d.cfg.AllowCommands})
	// Before the API serves: what an earlier provider on this WorkDir left
	// running is adopted (or restarted) and reported, and held by id.
	restored, err := p.Restore(ctx)
	if err != nil {
		return errors.Join(err, p.Stop(context.WithoutCancel(ctx)))
	}
	if restored > 0 {
		d.log.Info("restored the instances of an earlier provider", "instances", restored, "work_dir", d.cfg.WorkDir)
	}
	if err := d.Host.Start(ctx, p); err != nil {
		return errors.Join(fmt.Errorf("processprovider: %w", err), p.Stop(context.WithoutCancel(ctx)))
	}
	d.mu.Lock()
	d.provider = p
	d.mu.Unlock()
	return nil
}

// Stop stops registering and the API (the calls under way finish), then
// supervising: every process keeps running, recorded for the next Daemon
// on the same WorkDir (see [Provider.Stop]). It is idempotent and safe
// before Start.
func (d *Daemon) Stop(ctx context.Context) error {
	d.mu.Lock()
	p := d.provider
	d.mu.Unlock()
	if p == nil {
		return nil
	}
	d.stopOnce.Do(func() { d.stopErr = errors.Join(d.Host.Stop(ctx), p.Stop(ctx)) })
	return d.stopErr
}

// Name is the name the provider registers under unless told otherwise.
const Name = "process-sp"

// serviceTypes are the service types the provider registers for: plain
// containers, process clusters, whose orders list spec.members, and the dev
// catalog's namespaced-process (a container spec whose type requires the
// example adapter).
var serviceTypes = []string{"container", "process-cluster", "namespaced-process"}
