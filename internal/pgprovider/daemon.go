package pgprovider

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/stewardhq/steward/internal/background"
	"github.com/stewardhq/steward/internal/providerhost"
	"github.com/stewardhq/steward/pkg/provider"
)

// DaemonConfig configures a [Daemon].
type DaemonConfig struct {
	// Settings name the provider (Name defaults to Name) and Steward.
	providerhost.Settings
	// Provider is the server served and how.
	Provider Config
	// ObserveInterval is the time between two comparisons of every
	// database with its spec (drift); 0: every 60s, negative: never.
	ObserveInterval time.Duration
	// Drift is what a comparison does with a difference: DriftReport (the
	// default) or DriftEnforce.
	Drift  string
	Logger *slog.Logger
}

// Name is the name the provider registers under unless told otherwise.
const Name = "postgres-sp"

// Daemon runs the provider as a service provider: the provider API over
// HTTP and its registration with Steward, retried until accepted
// (Registered, URL: its [providerhost.Daemon]), and the comparisons of the
// databases with their specs.
type Daemon struct {
	*providerhost.Daemon[*Provider]
	cfg DaemonConfig
	log *slog.Logger
	// reporter is the provider's, which the comparisons report through too.
	reporter *provider.HTTPReporter
	observe  background.Loop
}

// NewDaemon returns a Daemon that is not started.
func NewDaemon(cfg DaemonConfig) *Daemon {
	cfg.Name = cmp.Or(cfg.Name, Name)
	cfg.ObserveInterval = cmp.Or(cfg.ObserveInterval, time.Minute)
	cfg.Drift = cmp.Or(cfg.Drift, DriftReport)
	log := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).With("component", "pgprovider", "provider", cfg.Name)
	reporter := cfg.Reporter()
	cfg.Provider.Logger, cfg.Provider.Reporter = log, reporter
	base := providerhost.NewDaemon(providerhost.DaemonConfig[*Provider]{Settings: cfg.Settings, Component: "pgprovider",
		Logger: log, ExportKey: exportKey(cfg.Provider.SecretKey),
		Open: func(ctx context.Context) (*Provider, error) { return Open(ctx, cfg.Provider) },
		Registration: provider.Registration{ServiceTypes: []string{ServiceType}, Operations: []string{
			provider.OperationUpdate, provider.OperationCredentials, provider.OperationValidate, provider.OperationExport}}})
	return &Daemon{Daemon: base, cfg: cfg, log: log, reporter: reporter}
}

// Start connects to the server, listens, serves the provider API and
// starts registering with Steward in the background; it returns once the
// API listens.
func (d *Daemon) Start(ctx context.Context) error {
	p, err := d.Serve(ctx)
	if err != nil {
		return err
	}
	d.log.Info("postgres provider serving", "server", p.Server(), "url", d.URL(),
		"allowed_extensions", d.cfg.Provider.AllowExtensions, "drift", d.cfg.Drift, "observe_interval", d.cfg.ObserveInterval)
	if d.cfg.ObserveInterval > 0 {
		if err := d.observe.Start(ctx, func(ctx context.Context) { d.observeLoop(ctx, p, d.reporter) }); err != nil {
			return errors.Join(err, d.Stop(context.WithoutCancel(ctx)))
		}
	}
	return nil
}

// observeLoop compares the databases with their specs every interval,
// once registered, and reports each instance whose comparison changed
// (every one after a start). A report that fails is sent again at the
// next comparison.
func (d *Daemon) observeLoop(ctx context.Context, p *Provider, reporter provider.StatusReporter) {
	select {
	case <-d.Registered():
	case <-ctx.Done():
		return
	}
	reported := map[string]string{}
	tick := time.NewTicker(d.cfg.ObserveInterval)
	defer tick.Stop()
	for {
		start := time.Now()
		seen, err := p.Observe(ctx, d.cfg.Drift)
		if err != nil && ctx.Err() == nil {
			d.log.Warn("observe the databases", "error", err)
		}
		drifted, fixed := 0, 0
		current := make(map[string]string, len(seen))
		for _, o := range seen {
			drifted += min(len(o.Differences), 1)
			fixed += len(o.Fixed)
			current[o.InstanceID] = reported[o.InstanceID]
			if reported[o.InstanceID] == o.key() && len(o.Fixed) == 0 {
				continue
			}
			err := reporter.Report(ctx, o.Report(time.Now().UTC()))
			if errors.Is(err, provider.ErrUnknownInstance) {
				// Not an instance of this Steward (another's database on
				// the same server): said once, not again until it changes.
				current[o.InstanceID] = o.key()
				continue
			}
			if err != nil {
				if ctx.Err() == nil {
					d.log.Warn("report drift", "instance_id", o.InstanceID, "error", err)
				}
				continue
			}
			current[o.InstanceID] = o.key()
		}
		reported = current
		d.log.Debug("databases observed", "databases", len(seen), "drifted", drifted, "fixed", fixed,
			"duration_ms", time.Since(start).Milliseconds())
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// Stop stops the comparisons, then registering, then the API (the calls
// under way finish), then closes the admin connections. It is idempotent
// (so is pgxpool's Close) and safe before Start.
func (d *Daemon) Stop(ctx context.Context) error {
	return errors.Join(d.observe.Stop(ctx), d.Daemon.Stop(ctx))
}
