package providerhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/stewardhq/steward/pkg/provider"
)

// Closer is a provider that holds what outlives a call (a cluster's
// watches, a server's connections), released once its API is shut down.
type Closer interface {
	provider.Provider
	// Close releases what the provider holds; a daemon may call it more
	// than once.
	Close()
}

// DaemonConfig configures a [Daemon].
type DaemonConfig[P Closer] struct {
	Settings
	// Component names the provider's package, in front of its errors:
	// "kubeprovider".
	Component string
	// Registration is what is registered besides the settings' name and
	// labels: the service types and the operations.
	Registration provider.Registration
	// ExportKey is the host's (Config.ExportKey).
	ExportKey []byte
	// Open opens the provider.
	Open   func(ctx context.Context) (P, error)
	Logger *slog.Logger
}

// Daemon runs a provider that holds a backend (a cluster, a server) as a
// service provider process needs it: Serve opens the provider, serves its
// API and registers it with Steward (Registered, URL: its [Host]); Stop
// stops registering, shuts the API down, then closes the provider. The
// kubernetes and postgres providers' daemons are one each, with what is
// their own (a log line, the postgres provider's drift loop) around it.
type Daemon[P Closer] struct {
	*Host
	cfg DaemonConfig[P]

	mu       sync.Mutex
	provider P
	opened   bool
}

// NewDaemon returns a Daemon that is not started.
func NewDaemon[P Closer](cfg DaemonConfig[P]) *Daemon[P] {
	host := New(Config{Listen: cfg.Listen, Logger: cfg.Logger, ExportKey: cfg.ExportKey,
		Registrar: cfg.Registrar(cfg.Registration)})
	return &Daemon[P]{Host: host, cfg: cfg}
}

// Name is the provider's registered name.
func (d *Daemon[P]) Name() string { return d.cfg.Name }

// Serve opens the provider, listens, serves the provider API and starts
// registering with Steward in the background; it returns the provider once
// the API listens. When it fails, nothing it opened is left open.
func (d *Daemon[P]) Serve(ctx context.Context) (P, error) {
	var none P
	if len(d.cfg.StewardURLs) == 0 {
		return none, errors.New(d.cfg.Component + ": a Steward URL is required")
	}
	p, err := d.cfg.Open(ctx)
	if err != nil {
		return none, err
	}
	if err := d.Host.Start(ctx, p); err != nil {
		p.Close()
		return none, fmt.Errorf("%s: %w", d.cfg.Component, err)
	}
	d.mu.Lock()
	d.provider, d.opened = p, true
	d.mu.Unlock()
	return p, nil
}

// Stop stops registering, then the API (the calls under way finish), then
// closes the provider. It is idempotent and safe before Serve.
func (d *Daemon[P]) Stop(ctx context.Context) error {
	err := d.Host.Stop(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.opened {
		d.provider.Close()
	}
	return err
}
