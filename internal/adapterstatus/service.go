package adapterstatus

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/store"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// FutureAllowance is how far ahead of the server's clock a report's
// observed_time may be (the adapter's clock may run a little fast). A
// report further ahead is discarded: it would pass the gate's
// "observed_time >= deleted_at" before the adapter saw the deletion.
const FutureAllowance = time.Minute

// Reconciles asks for an order's reconcile in the report's transaction
// (*reconcile.Queue): the lifecycle then checks the order's deletion gate.
type Reconciles interface {
	RequestTx(ctx context.Context, tx *store.Tx, orderID string) error
}

// Config configures the Service. DB, Orders and Reconciles are required.
type Config struct {
	DB *store.DB
	// Orders are what reports are on: a report is checked against its
	// order's generation, read with the order's lock in the report's
	// transaction. A report on an order that does not exist or is another
	// project's is order.ErrNotFound (404, not 403).
	Orders     *order.Store
	Reconciles Reconciles
	Logger     *slog.Logger
	// Registerer receives the metrics. Defaults to none.
	Registerer prometheus.Registerer
	// Now reads the clock. Defaults to time.Now.
	Now func() time.Time
	// Changed, when set, is told the id of each order whose adapter
	// statuses a transaction changed, once it has committed (live.Feed's
	// Changed, for the console's order page).
	Changed func(orderID string)
}

// Service stores and lists adapter status reports. It is safe for
// concurrent use.
type Service struct {
	cfg     Config
	q       *queries
	reports *prometheus.CounterVec
}

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.DB == nil || cfg.Orders == nil || cfg.Reconciles == nil {
		panic("adapterstatus: Config.DB, Config.Orders and Config.Reconciles are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{cfg: cfg, q: newQueries(cfg.DB.Engine()),
		reports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "steward_adapter_status_reports_total",
			Help: "Adapter status reports, by outcome (stored, or discarded as older, past_generation, future_generation, future_time).",
		}, []string{"outcome"}),
	}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(s.reports)
	}
	return s
}

// Why a report was discarded.
const (
	discardOlder            = "older"
	discardPastGeneration   = "past_generation"
	discardFutureGeneration = "future_generation"
	discardFutureTime       = "future_time"
)

// DiscardedError says why a report was not stored (the API answers 204).
type DiscardedError struct {
	Reason string
	Detail string
}

func (e *DiscardedError) Error() string { return "adapter status report discarded: " + e.Detail }

// Put stores an adapter's report on an order and, when the order is being
// deleted, asks for its reconcile in the same transaction. A report that is stale or from the future
// is not stored: the error is a *DiscardedError.
func (s *Service) Put(ctx context.Context, p PutParams) (Report, error) {
	if err := p.validate(); err != nil {
		return Report{}, err
	}
	now := s.cfg.Now().UTC()
	observed := p.ObservedTime.UTC()
	if observed.After(now.Add(FutureAllowance)) {
		return Report{}, s.discard(p, discardFutureTime,
			fmt.Sprintf("observed_time %s is ahead of the server's clock (%s) by more than %s",
				observed.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano), FutureAllowance))
	}
	data := p.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	var stored Report
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		// A deleting order takes reports too: they are what its deletion
		// waits for.
		o, err := s.cfg.Orders.LockTx(ctx, tx, p.Project, p.OrderID)
		if err != nil {
			return err
		}
		switch gen := *p.ObservedGeneration; {
		case gen < o.Generation:
			return s.discard(p, discardPastGeneration,
				fmt.Sprintf("observed_generation %d is older than the order's generation %d", gen, o.Generation))
		case gen > o.Generation:
			return s.discard(p, discardFutureGeneration,
				fmt.Sprintf("observed_generation %d is ahead of the order's generation %d", gen, o.Generation))
		}
		// The upsert returns the stored row: one statement, no read-back.
		stored, err = scanReport(tx.QueryRow(ctx, s.q.adapterStatusUpsert, p.OrderID, p.Adapter,
			*p.ObservedGeneration, observed, store.JSON(p.Conditions), data, now, now))
		if errors.Is(err, store.ErrNotFound) {
			return s.discard(p, discardOlder, "the stored report is newer (same generation, later observed_time)")
		}
		if err != nil {
			return fmt.Errorf("store adapter status: %w", err)
		}
		if s.cfg.Changed != nil {
			tx.AfterCommit(func() { s.cfg.Changed(p.OrderID) })
		}
		// Only a deleting order's reconcile has anything to do with a report:
		// its deletion gate may open.
		if o.Deleting() {
			return s.cfg.Reconciles.RequestTx(ctx, tx, p.OrderID)
		}
		return nil
	})
	if err != nil {
		return Report{}, err
	}
	s.reports.WithLabelValues("stored").Inc()
	return stored, nil
}

func (s *Service) discard(p PutParams, reason, detail string) error {
	s.reports.WithLabelValues(reason).Inc()
	s.cfg.Logger.Debug("adapter status report discarded", "order_id", p.OrderID, "adapter", p.Adapter,
		"reason", reason, "detail", detail)
	return &DiscardedError{Reason: reason, Detail: detail}
}

// ListParams selects an order's reports.
type ListParams struct {
	Project string
	OrderID string
	Page    store.PageRequest
}

// List returns a page of an order's reports, oldest adapter first. It
// reads the order to answer 404 for one the caller cannot see.
func (s *Service) List(ctx context.Context, p ListParams) (store.Page[Report], error) {
	if _, err := s.cfg.Orders.Facts(ctx, p.Project, p.OrderID); err != nil {
		return store.Page[Report]{}, err
	}
	return store.ListPage(ctx, s.cfg.DB, s.q.adapterStatusList, p.Page, scanReport,
		func(r Report) store.Cursor { return store.Cursor{Time: r.CreateTime, ID: r.Adapter} }, p.OrderID)
}

// AllTx returns every stored report of an order, read in tx.
func (s *Service) AllTx(ctx context.Context, tx *store.Tx, orderID string) ([]Report, error) {
	rows, err := tx.Query(ctx, s.q.adapterStatusAll, orderID)
	if err != nil {
		return nil, fmt.Errorf("read adapter statuses of %s: %w", orderID, err)
	}
	return store.Collect(rows, scanReport)
}

// All returns every stored report of an order.
func (s *Service) All(ctx context.Context, orderID string) ([]Report, error) {
	rows, err := s.cfg.DB.Query(ctx, s.q.adapterStatusAll, orderID)
	if err != nil {
		return nil, fmt.Errorf("read adapter statuses of %s: %w", orderID, err)
	}
	return store.Collect(rows, scanReport)
}

// OfOrders returns the reports on a batch of orders, by order id, with what
// a decision about the orders reads (the sentinel's): each report's
// adapter, observed generation and conditions; its data and times are
// left out.
func (s *Service) OfOrders(ctx context.Context, orderIDs []string) (map[string][]Report, error) {
	rows, err := s.q.AdapterStatusOfOrders(ctx, s.cfg.DB, orderIDs)
	if err != nil {
		return nil, fmt.Errorf("read adapter statuses: %w", err)
	}
	out := map[string][]Report{}
	for _, row := range rows {
		r := Report{OrderID: row.OrderID, Adapter: row.Adapter, ObservedGeneration: row.ObservedGeneration}
		if err := json.Unmarshal(row.Conditions, &r.Conditions); err != nil {
			return nil, fmt.Errorf("read adapter %s's status conditions on %s: %w", r.Adapter, r.OrderID, err)
		}
		out[row.OrderID] = append(out[row.OrderID], r)
	}
	return out, nil
}

func scanReport(row store.Scanner) (Report, error) {
	var r Report
	var conditions json.RawMessage
	err := row.Scan(&r.OrderID, &r.Adapter, &r.ObservedGeneration, &r.ObservedTime, &conditions, &r.Data,
		&r.CreateTime, &r.UpdateTime)
	if errors.Is(err, store.ErrNotFound) {
		return Report{}, err
	}
	if err != nil {
		return Report{}, fmt.Errorf("read adapter status: %w", err)
	}
	if err := json.Unmarshal(conditions, &r.Conditions); err != nil {
		return Report{}, fmt.Errorf("read adapter status conditions: %w", err)
	}
	return r, nil
}
