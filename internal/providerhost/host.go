// Package providerhost runs a provider.Provider as a service provider
// process needs it: the provider API served over HTTP on its own listener,
// and the registration with Steward, retried in the background until
// accepted. The providers Steward ships (process, postgres) are hosted by
// it; what they hold besides (processes, connections) they stop
// themselves, after the host.
package providerhost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/background"
	"github.com/stewardhq/steward/pkg/provider"
)

// Config configures a [Host].
type Config struct {
	// Listen is the provider API's address; 127.0.0.1:0 (a free port) by
	// default. The registration carries the real one.
	Listen string
	// Registrar registers the provider; its Registration.Endpoint is set
	// from the listener.
	Registrar provider.RegistrarConfig
	Logger    *slog.Logger
}

// Host serves one provider and registers it.
type Host struct {
	log          *slog.Logger
	http         *http.Server
	listener     net.Listener
	served       chan error
	registered   chan struct{}
	registration background.Loop

	stopOnce sync.Once
	stopErr  error
}

// Start listens, serves p and starts registering in the background; it
// returns once the API listens. Stop ends both.
func Start(ctx context.Context, p provider.Provider, cfg Config) (*Host, error) {
	listen := cmp.Or(cfg.Listen, "127.0.0.1:0")
	log := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", listen, err)
	}
	rc := cfg.Registrar
	rc.Registration.Endpoint = "http://" + ln.Addr().String()
	rc.Logger = cmp.Or(rc.Logger, log)
	registrar, err := provider.NewRegistrar(rc)
	if err != nil {
		ln.Close()
		return nil, err
	}
	h := &Host{log: log, listener: ln, served: make(chan error, 1), registered: make(chan struct{}),
		http: &http.Server{Handler: provider.NewServer(p, provider.ServerConfig{Logger: log}), ReadHeaderTimeout: 10 * time.Second}}
	go func() { h.served <- h.http.Serve(ln) }()
	err = h.registration.Start(ctx, func(regCtx context.Context) {
		reg, err := registrar.Register(regCtx)
		if err != nil {
			if regCtx.Err() == nil {
				log.Error("registration with Steward failed", "error", err)
			}
			return
		}
		log.Info("registered with Steward", "id", reg.ID, "endpoint", reg.Endpoint)
		close(h.registered)
	})
	if err != nil {
		return nil, errors.Join(err, h.Stop(context.WithoutCancel(ctx)))
	}
	return h, nil
}

// Registered is closed once Steward accepted the registration.
func (h *Host) Registered() <-chan struct{} { return h.registered }

// URL is the provider API's base URL.
func (h *Host) URL() string { return "http://" + h.listener.Addr().String() }

// Stop stops registering (nothing registers once it returns, whatever ctx
// says), then shuts the API down, waiting for the calls under way or ctx.
// It is idempotent.
func (h *Host) Stop(ctx context.Context) error {
	h.stopOnce.Do(func() {
		_ = h.registration.Stop(context.WithoutCancel(ctx))
		errs := []error{h.http.Shutdown(ctx)}
		if err := <-h.served; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
		h.stopErr = errors.Join(errs...)
	})
	return h.stopErr
}
