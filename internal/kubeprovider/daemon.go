package kubeprovider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stewardhq/steward/internal/providerhost"
	"github.com/stewardhq/steward/pkg/provider"
)

// DaemonConfig configures a [Daemon]: one cluster served as one provider.
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
	// Provider is the cluster served and how.
	Provider Config
	Logger   *slog.Logger
}

// Name is the name the provider registers under unless told otherwise.
const Name = "kubernetes-sp"

// Daemon runs the provider for one cluster: the provider API over HTTP and
// its registration with Steward, retried until accepted (Registered, URL:
// its [providerhost.Host]).
type Daemon struct {
	*providerhost.Host
	cfg DaemonConfig
	log *slog.Logger

	mu       sync.Mutex
	provider *Provider
}

// NewDaemon returns a Daemon that is not started.
func NewDaemon(cfg DaemonConfig) *Daemon {
	cfg.Name = cmp.Or(cfg.Name, Name)
	log := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).With("component", "kubeprovider", "provider", cfg.Name)
	cfg.Provider.Logger = log
	host := providerhost.New(providerhost.Config{Listen: cfg.Listen, Logger: log,
		Registrar: provider.RegistrarConfig{StewardURLs: cfg.StewardURLs, Token: cfg.Token,
			Registration: provider.Registration{Name: cfg.Name, ServiceTypes: []string{ServiceType},
				Metadata: maps.Clone(cfg.Labels), Operations: []string{provider.OperationUpdate,
					provider.OperationValidate, provider.OperationRepair}}}})
	return &Daemon{Host: host, cfg: cfg, log: log}
}

// Start lists the cluster's apps, listens, serves the provider API and
// starts registering with Steward in the background; it returns once the
// API listens.
func (d *Daemon) Start(ctx context.Context) error {
	if len(d.cfg.StewardURLs) == 0 {
		return errors.New("kubeprovider: a Steward URL is required")
	}
	pcfg := d.cfg.Provider
	pcfg.Reporter = &provider.HTTPReporter{StewardURLs: d.cfg.StewardURLs, Token: d.cfg.Token}
	p, err := Open(ctx, pcfg)
	if err != nil {
		return err
	}
	if err := d.Host.Start(ctx, p); err != nil {
		p.Close()
		return fmt.Errorf("kubeprovider: %w", err)
	}
	d.log.Info("kubernetes provider serving", "cluster", p.Cluster(), "url", d.URL(), "drift", pcfg.Drift,
		"max_cpu", pcfg.MaxCPU, "max_memory", pcfg.MaxMemory)
	d.mu.Lock()
	d.provider = p
	d.mu.Unlock()
	return nil
}

// Stop stops registering, then the API (the calls under way finish), then
// the watch and the repairs under way. It is idempotent and safe before
// Start.
func (d *Daemon) Stop(ctx context.Context) error {
	err := d.Host.Stop(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.provider != nil {
		d.provider.Close()
	}
	return err
}

// RESTConfig reads how to reach a cluster from a kubeconfig file, with
// kubeContext in place of its current context when not empty.
func RESTConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	if kubeconfig == "" {
		return nil, errors.New("kubeprovider: a kubeconfig file is required")
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeprovider: kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}
