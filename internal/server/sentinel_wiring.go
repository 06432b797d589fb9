package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/stewardhq/steward/internal/adapterstatus"
	"github.com/stewardhq/steward/internal/catalog"
	"github.com/stewardhq/steward/internal/events"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/sentinel"
	"github.com/stewardhq/steward/internal/store"
)

// buildSentinel builds the in-process sentinel unless it is turned off.
// Every replica has one, and only the one on River's elected leader runs
// cycles: the others would find the same due orders and lose every publish
// (compare and set, see package sentinel), at the cost of a query each per
// interval. Its events' source names the replica that decided.
func (s *Server) buildSentinel() error {
	if s.cfg.SentinelInterval < 0 {
		return nil
	}
	var err error
	s.sentinel, err = sentinel.New(sentinel.Config{
		DB: s.db, Orders: s.orders, Reports: s.adapterStatus, Catalog: s.catalog, Logger: s.logger, Registerer: s.registry, Notify: s.relay.Notify,
		Interval: s.cfg.SentinelInterval, Debounce: s.cfg.SentinelDebounce, MaxAge: s.cfg.SentinelMaxAge,
		Decision: s.cfg.SentinelDecision, Name: "sentinel/" + s.peers.ID(),
		Leads: func(ctx context.Context) (bool, error) { return s.jobs.Leads(ctx) },
	})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

// natsListenAddr splits --nats-listen into the embedded NATS server's host
// and port. Without a token it must be 127.0.0.1 (or localhost): a socket
// without credentials beyond the host would let anyone publish
// control-plane events.
func natsListenAddr(addr string, token bool) (host string, port int, err error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	if !token && host != "127.0.0.1" && host != "localhost" {
		return "", 0, fmt.Errorf("%q: without --nats-token-file the embedded NATS server listens on 127.0.0.1 only", addr)
	}
	port, err = strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%q: bad port", addr)
	}
	return cmp.Or(host, "0.0.0.0"), port, nil
}

// SentinelConfig is what `steward sentinel` can be told: a sentinel on its
// own, beside servers that share its database.
type SentinelConfig struct {
	// DataDir and DatabaseURL select the store, as for the server.
	DataDir     string
	DatabaseURL string
	// NATSURL, when set, runs an outbox relay in this process too, so the
	// sentinel's events are published without a server; else the servers'
	// relays publish them.
	NATSURL  string
	Logger   *slog.Logger
	Interval time.Duration
	Debounce time.Duration
	MaxAge   time.Duration
	Decision *sentinel.Decision
	// Name tells this sentinel's events apart (their source).
	Name string
}

// RunSentinel runs a sentinel until ctx ends.
func RunSentinel(ctx context.Context, cfg SentinelConfig) error {
	logger := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	db, err := store.Open(ctx, store.Config{DatabaseURL: cfg.DatabaseURL, DataDir: cmp.Or(cfg.DataDir, "steward-data"),
		Migrators: Migrators(), Logger: logger.With("component", "store")})
	if err != nil {
		return fmt.Errorf("sentinel: %w", err)
	}
	defer db.Close()
	serviceTypes, err := catalog.NewServiceTypes(db)
	if err != nil {
		return err
	}
	orders := order.New(order.Config{DB: db, ServiceType: serviceTypes.OrderType})
	// Reports are only read here: the queue a report would ask is unused.
	reports := adapterstatus.New(adapterstatus.Config{DB: db, Orders: orders, Reconciles: reconcile.New(db, logger),
		Logger: logger})
	scfg := sentinel.Config{DB: db, Orders: orders, Reports: reports,
		Catalog: catalog.New(catalog.Config{DB: db, ServiceTypes: serviceTypes, Orders: orders, Logger: logger}),
		Logger:  logger, Interval: cfg.Interval, Debounce: cfg.Debounce, MaxAge: cfg.MaxAge, Decision: cfg.Decision,
		Name: cfg.Name}
	if cfg.NATSURL != "" {
		bus := events.New(events.Config{Logger: logger, URL: cfg.NATSURL})
		if err := bus.Start(ctx); err != nil {
			return fmt.Errorf("sentinel: connect to NATS: %w", err)
		}
		defer func() { _ = bus.Stop(context.WithoutCancel(ctx)) }()
		relay := events.NewRelay(events.RelayConfig{DB: db, Bus: bus, Logger: logger})
		if err := relay.Start(ctx); err != nil {
			return fmt.Errorf("sentinel: start event relay: %w", err)
		}
		defer func() { _ = relay.Stop(context.WithoutCancel(ctx)) }()
		scfg.Notify = relay.Notify
	}
	sn, err := sentinel.New(scfg)
	if err != nil {
		return err
	}
	if err := sn.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	err = sn.Stop(stopCtx)
	logger.Info("sentinel stopped", "error", err)
	return err
}
