package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/stewardhq/steward/internal/adapter"
	"github.com/stewardhq/steward/internal/events"
)

// AdapterConfig is what `steward adapter` can be told.
type AdapterConfig struct {
	// Config is the adapter's task config (the DSL), loaded and checked.
	Config *adapter.Config
	// StewardURLs are the API the adapter reads orders from and reports
	// to: Steward's replicas (or a load balancer), tried in turn while one
	// cannot be reached. Token is its bearer token (a service account's, or
	// none with --dev).
	StewardURLs []string
	Token       string
	// NATSURL is the JetStream server or cluster Steward publishes on
	// (`steward server --nats-listen`, or the external cluster).
	NATSURL string
	// Kubeconfig is the cluster the adapter manages ("" for in-cluster).
	Kubeconfig string
	Logger     *slog.Logger
	// Timeout bounds one reconcile (default 5m).
	Timeout time.Duration
	// Workers is how many reconciles run at once, each order's in turn
	// (default adapter.DefaultWorkers).
	Workers int
}

// RunAdapter consumes reconcile events with the adapter's config until ctx
// ends, then stops, letting its running reconcile finish.
func RunAdapter(ctx context.Context, cfg AdapterConfig) error {
	logger := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	transport, err := adapter.KubeconfigTransport(cfg.Kubeconfig)
	if err != nil {
		return fmt.Errorf("adapter: kubernetes: %w", err)
	}
	exec, err := adapter.NewExecutor(cfg.Config, adapter.Deps{
		Transport: transport, Logger: logger,
		API: &adapter.HTTPAPI{BaseURLs: cfg.StewardURLs, Token: cfg.Token, Client: &http.Client{Timeout: 30 * time.Second}},
	})
	if err != nil {
		return err
	}
	bus := events.New(events.Config{URL: cfg.NATSURL, Logger: logger})
	if err := bus.Start(ctx); err != nil {
		return fmt.Errorf("adapter: connect to NATS: %w", err)
	}
	defer func() { _ = bus.Stop(context.WithoutCancel(ctx)) }()
	c, err := adapter.NewConsumer(adapter.ConsumerConfig{Executor: exec, Bus: bus, Logger: logger, Timeout: cfg.Timeout,
		Workers: cfg.Workers})
	if err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	c.Stop()
	logger.Info("adapter stopped", "adapter", cfg.Config.Adapter.Name)
	return nil
}
