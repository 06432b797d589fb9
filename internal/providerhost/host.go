// Package providerhost runs a provider.Provider as a service provider
// process needs it: the provider API served over HTTP on its own listener,
// and the registration with Steward, retried in the background until
// accepted. The providers Steward ships (process, postgres, kubernetes)
// are hosted by it; what they hold besides (processes, connections,
// watches) is stopped after the host: by the process provider itself, and
// by a [Daemon] for the others. [Settings] are what every provider is told
// about itself and Steward, from the same flags of each command.
package providerhost

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
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
	// from the listener, and its Registration.CallToken from the host's.
	Registrar provider.RegistrarConfig
	// CallToken is the secret Steward must present on every call to the
	// provider API; any other caller gets 401. Empty: a new random one at
	// each Start, so a restart rotates it (Steward learns it from the
	// registration).
	CallToken string
	// ExportKey signs the provider's export grants
	// (provider.ServerConfig.ExportKey); empty: a random one per Start.
	ExportKey []byte
	Logger    *slog.Logger
}

// Host serves one provider and registers it. Its methods are safe before
// Start: Registered is then never closed, URL is "", Stop does nothing.
type Host struct {
	cfg          Config
	log          *slog.Logger
	registered   chan struct{}
	registration background.Loop

	mu        sync.Mutex
	callToken string
	http      *http.Server
	listener  net.Listener
	served    chan error

	stopOnce sync.Once
	stopErr  error
}

// New returns a Host that is not started.
func New(cfg Config) *Host {
	return &Host{cfg: cfg, log: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)), registered: make(chan struct{})}
}

// Start listens, serves p and starts registering in the background; it
// returns once the API listens. Stop ends both.
func (h *Host) Start(ctx context.Context, p provider.Provider) error {
	listen := cmp.Or(h.cfg.Listen, "127.0.0.1:0")
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", listen, err)
	}
	token := h.cfg.CallToken
	if token == "" {
		token = newCallToken()
	}
	rc := h.cfg.Registrar
	rc.Registration.Endpoint = "http://" + ln.Addr().String()
	rc.Registration.CallToken = token
	rc.Logger = cmp.Or(rc.Logger, h.log)
	registrar, err := provider.NewRegistrar(rc)
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: provider.NewServer(p, provider.ServerConfig{Logger: h.log, Token: token, ExportKey: h.cfg.ExportKey}), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	h.mu.Lock()
	h.http, h.listener, h.served, h.callToken = srv, ln, served, token
	h.mu.Unlock()
	go func() { served <- srv.Serve(ln) }()
	err = h.registration.Start(ctx, func(regCtx context.Context) {
		reg, err := registrar.Register(regCtx)
		if err != nil {
			if regCtx.Err() == nil {
				h.log.Error("registration with Steward failed", "error", err)
			}
			return
		}
		h.log.Info("registered with Steward", "id", reg.ID, "endpoint", reg.Endpoint)
		close(h.registered)
	})
	if err != nil {
		return errors.Join(err, h.Stop(context.WithoutCancel(ctx)))
	}
	return nil
}

// newCallToken is 32 random bytes, hex: a call token nobody can guess.
func newCallToken() string {
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails (Go 1.24)
	return "stp_" + hex.EncodeToString(raw[:])
}

// Registered is closed once Steward accepted the registration.
func (h *Host) Registered() <-chan struct{} { return h.registered }

// CallToken is the token the provider API requires, as registered ("" before
// Start).
func (h *Host) CallToken() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.callToken
}

// URL is the provider API's base URL ("" before Start).
func (h *Host) URL() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.listener == nil {
		return ""
	}
	return "http://" + h.listener.Addr().String()
}

// Stop stops registering (nothing registers once it returns, whatever ctx
// says), then shuts the API down, waiting for the calls under way or ctx.
// It is idempotent, and does nothing before Start.
func (h *Host) Stop(ctx context.Context) error {
	h.mu.Lock()
	srv, served := h.http, h.served
	h.mu.Unlock()
	if srv == nil {
		return nil
	}
	h.stopOnce.Do(func() {
		_ = h.registration.Stop(context.WithoutCancel(ctx))
		errs := []error{srv.Shutdown(ctx)}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
		h.stopErr = errors.Join(errs...)
	})
	return h.stopErr
}
