package kubeprovider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stewardhq/steward/internal/providerhost"
	"github.com/stewardhq/steward/pkg/provider"
)

// DaemonConfig configures a [Daemon]: one cluster served as one provider.
type DaemonConfig struct {
	// Settings name the provider (Name defaults to Name) and Steward.
	providerhost.Settings
	// Provider is the cluster served and how.
	Provider Config
	Logger   *slog.Logger
}

// Name is the name the provider registers under unless told otherwise.
const Name = "kubernetes-sp"

// Daemon runs the provider for one cluster: the provider API over HTTP and
// its registration with Steward, retried until accepted (Registered, URL:
// its [providerhost.Daemon]). Stop stops registering, then the API (the
// calls under way finish), then the watch and the repairs under way; it is
// idempotent and safe before Start.
type Daemon struct {
	*providerhost.Daemon[*Provider]
	cfg DaemonConfig
	log *slog.Logger
}

// NewDaemon returns a Daemon that is not started.
func NewDaemon(cfg DaemonConfig) *Daemon {
	cfg.Name = cmp.Or(cfg.Name, Name)
	log := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).With("component", "kubeprovider", "provider", cfg.Name)
	cfg.Provider.Logger = log
	cfg.Provider.Reporter = cfg.Reporter()
	base := providerhost.NewDaemon(providerhost.DaemonConfig[*Provider]{Settings: cfg.Settings, Component: "kubeprovider",
		Logger: log, Open: func(ctx context.Context) (*Provider, error) { return Open(ctx, cfg.Provider) },
		Registration: provider.Registration{ServiceTypes: []string{ServiceType}, Operations: []string{
			provider.OperationUpdate, provider.OperationValidate, provider.OperationRepair}}})
	return &Daemon{Daemon: base, cfg: cfg, log: log}
}

// Start lists the cluster's apps, listens, serves the provider API and
// starts registering with Steward in the background; it returns once the
// API listens.
func (d *Daemon) Start(ctx context.Context) error {
	p, err := d.Serve(ctx)
	if err != nil {
		return err
	}
	pcfg := d.cfg.Provider
	d.log.Info("kubernetes provider serving", "cluster", p.Cluster(), "url", d.URL(), "drift", pcfg.Drift,
		"max_cpu", pcfg.MaxCPU, "max_memory", pcfg.MaxMemory)
	return nil
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
