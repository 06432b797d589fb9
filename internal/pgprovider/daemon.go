package pgprovider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/background"
	"github.com/stewardhq/steward/internal/providerhost"
	"github.com/stewardhq/steward/pkg/provider"
)

// DaemonConfig configures a [Daemon].
type DaemonConfig struct {
	// Name is the provider's registered name. Defaults to Name.
	Name string
	// Listen is the provider API's address. Defaults to 127.0.0.1:0 (a
	// free port); the registration carries the real one.
	Listen string
	// StewardURLs are Steward's base URLs (its replicas), tried in turn.
	StewardURLs []string
	// Token authenticates to Steward; empty for a --dev server.
	Token string
	// Labels are registered as the provider's metadata (region=eu).
	Labels map[string]string
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
// (Registered, URL: its [providerhost.Host]).
type Daemon struct {
	*providerhost.Host
	cfg DaemonConfig
	log *slog.Logger

	mu       sync.Mutex
	provider *Provider
	observe  background.Loop
}

// NewDaemon returns a Daemon that is not started.
func NewDaemon(cfg DaemonConfig) *Daemon {
	cfg.Name = cmp.Or(cfg.Name, Name)
	cfg.ObserveInterval = cmp.Or(cfg.ObserveInterval, time.Minute)
	cfg.Drift = cmp.Or(cfg.Drift, DriftReport)
	log := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).With("component", "pgprovider", "provider", cfg.Name)
	cfg.Provider.Logger = log
	host := providerhost.New(providerhost.Config{Listen: cfg.Listen, Logger: log, ExportKey: exportKey(cfg.Provider.SecretKey),
		Registrar: provider.RegistrarConfig{StewardURLs: cfg.StewardURLs, Token: cfg.Token,
			Registration: provider.Registration{Name: cfg.Name, ServiceTypes: []string{ServiceType},
				Metadata: maps.Clone(cfg.Labels), Operations: []string{provider.OperationUpdate, provider.OperationCredentials,
					provider.OperationValidate, provider.OperationExport}}}})
	return &Daemon{Host: host, cfg: cfg, log: log}
}

// Start connects to the server, listens, serves the provider API and
// starts registering with Steward in the background; it returns once the
// API listens.
func (d *Daemon) Start(ctx context.Context) error {
	if len(d.cfg.StewardURLs) == 0 {
		return errors.New("pgprovider: a Steward URL is required")
	}
	reporter := &provider.HTTPReporter{StewardURLs: d.cfg.StewardURLs, Token: d.cfg.Token}
	pcfg := d.cfg.Provider
	pcfg.Reporter = reporter
	p, err := Open(ctx, pcfg)
	if err != nil {
		return err
	}
	if err := d.Host.Start(ctx, p); err != nil {
		p.Close()
		return fmt.Errorf("pgprovider: %w", err)
	}
	d.log.Info("postgres provider serving", "server", p.Server(), "url", d.URL(),
		"allowed_extensions", d.cfg.Provider.AllowExtensions, "drift", d.cfg.Drift, "observe_interval", d.cfg.ObserveInterval)
	d.mu.Lock()
	d.provider = p
	d.mu.Unlock()
	if d.cfg.ObserveInterval > 0 {
		if err := d.observe.Start(ctx, func(ctx context.Context) { d.observeLoop(ctx, p, reporter) }); err != nil {
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

// Stop stops registering, then the API (the calls under way finish), then
// closes the admin connections. It is idempotent and safe before Start.
func (d *Daemon) Stop(ctx context.Context) error {
	err := errors.Join(d.observe.Stop(ctx), d.Host.Stop(ctx))
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.provider != nil {
		d.provider.Close() // pgxpool's Close is idempotent
	}
	return err
}
