package sentinel

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stewardhq/steward/internal/adapterstatus"
	"github.com/stewardhq/steward/internal/background"
	"github.com/stewardhq/steward/internal/events"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/store"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// Catalog says which service types the sentinel watches by default: those
// whose orders wait for adapters (the catalog implements it).
type Catalog interface {
	// RequiredAdaptersByType returns each service type's required adapters.
	RequiredAdaptersByType(ctx context.Context) (map[string][]string, error)
}

// Reports are adapters' reports on orders (*adapterstatus.Service).
type Reports interface {
	// OfOrders returns the reports on a batch of orders, by order id.
	OfOrders(ctx context.Context, orderIDs []string) (map[string][]adapterstatus.Report, error)
}

// Config configures a [Service]. DB, Orders, Reports and Catalog are
// required.
type Config struct {
	DB *store.DB
	// Orders are what the sentinel decides about, and Reports what their
	// adapters last said of them.
	Orders  *order.Store
	Reports Reports
	Catalog Catalog
	Logger  *slog.Logger
	// Registerer receives the metrics. Defaults to none.
	Registerer prometheus.Registerer
	// Notify is called after a batch that published, to wake the outbox
	// relay (events.Relay.Notify). Optional: the relay also polls.
	Notify func()
	// Name is the event source's last segment, telling sentinels apart in
	// events and logs. Defaults to "sentinel".
	Name string
	// ServiceTypes watches these service types as well as those with
	// required adapters: an adapter may act on orders that do not wait
	// for it.
	ServiceTypes []string
	// Decision is the message_decision. Defaults to [DefaultDecision].
	Decision *Decision
	// Interval is the time between the starts of two cycles. Defaults to 5s.
	Interval time.Duration
	// Debounce is how long after a publish a not-ready order is published
	// again. Defaults to 10s.
	Debounce time.Duration
	// MaxAge is how long after a publish any order is published again, so
	// that adapters resync with what they manage. Defaults to 30m.
	MaxAge time.Duration
	// BatchSize is how many candidates one transaction decides. Defaults
	// to 500.
	BatchSize int
	// Lookback is how far before the last cycle's start a cycle looks for
	// new orders, so that a create whose transaction committed after that
	// start, with an earlier create time, is still found. Every MaxAge a
	// cycle looks from the first order. Defaults to 10s.
	Lookback time.Duration
	// Now reads the clock. Defaults to time.Now.
	Now func() time.Time
	// Leads, when set, is asked before each cycle: a cycle runs only when
	// it says true, so that of several servers only the elected one
	// decides (jobs.Client.Leads). One that stands by asks again every
	// second, so a new leader's first cycle follows its election closely.
	// Nil: every cycle runs (`steward sentinel` on its own).
	Leads func(ctx context.Context) (bool, error)
}

// Service is a sentinel: it decides, cycle after cycle, which orders need
// reconciling and publishes a reconcile event for each. Build it with [New].
type Service struct {
	cfg     Config
	logger  *slog.Logger
	q       *queries
	decider *decider
	m       metrics

	cycles background.Loop
	// leading is what the last cycle's Leads said (true without Leads);
	// only the run loop touches it.
	leading bool

	// mu makes the cycles of this process one at a time and guards what
	// they carry from one to the next.
	mu sync.Mutex
	// newSince is the start of the last cycle that read the new orders
	// to its end; zero before the first.
	newSince time.Time
	// swept is when a cycle last read the new orders from the first.
	swept time.Time
}

// New checks cfg and compiles its decision.
func New(cfg Config) (*Service, error) {
	if cfg.DB == nil || cfg.Orders == nil || cfg.Reports == nil || cfg.Catalog == nil {
		return nil, errors.New("sentinel: DB, Orders, Reports and Catalog are required")
	}
	cfg.Name = cmp.Or(cfg.Name, "sentinel")
	cfg.Interval = cmp.Or(cfg.Interval, 5*time.Second)
	cfg.Debounce = cmp.Or(cfg.Debounce, 10*time.Second)
	cfg.MaxAge = cmp.Or(cfg.MaxAge, 30*time.Minute)
	cfg.BatchSize = cmp.Or(cfg.BatchSize, 500)
	cfg.Lookback = cmp.Or(cfg.Lookback, 10*time.Second)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	d := DefaultDecision()
	if cfg.Decision != nil {
		d = *cfg.Decision
	}
	dc, err := compile(d)
	if err != nil {
		return nil, fmt.Errorf("sentinel: %w", err)
	}
	s := &Service{
		cfg:     cfg,
		logger:  cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).With("component", "sentinel"),
		q:       newQueries(cfg.DB.Engine()),
		decider: dc,
		m:       newMetrics(),
	}
	if cfg.Leads == nil {
		s.m.leading.Set(1)
	}
	if cfg.Registerer != nil {
		if err := s.m.register(cfg.Registerer); err != nil {
			return nil, fmt.Errorf("sentinel: metrics: %w", err)
		}
	}
	return s, nil
}

// Subject is the NATS subject, and the CloudEvent type, of the reconcile
// events for orders of a service type.
func Subject(serviceType string) string { return "steward.reconcile." + serviceType }

// EventData is the data of a reconcile event: enough to find the order
// (adapters GET it for its current state) and to see why it was sent.
type EventData struct {
	ID          string     `json:"id"`
	Kind        string     `json:"kind"`
	Href        string     `json:"href"`
	Project     string     `json:"project"`
	ServiceType string     `json:"service_type"`
	Generation  int64      `json:"generation"`
	DeletedAt   *time.Time `json:"deleted_at"`
	Reason      string     `json:"reason"`
}

// CycleStats is what one cycle did.
type CycleStats struct {
	// Candidates is how many orders the query found and the decision read.
	Candidates int
	// Published is how many reconcile events were written to the outbox.
	Published int
	// Lost is how many publishes another sentinel made first.
	Lost int
	// Failed is how many orders the decision could not evaluate.
	Failed int
}

// RunOnce runs one cycle. It reads, in batches, the orders of the watched
// types the sentinel has no mark of (created since a little before the
// last cycle) and then the marked orders now due (changed, debounced or
// past max age: the sentinel_marks_due index), so its cost follows the due
// work, not the inventory. It decides each one and, in one transaction
// per batch, records its decisions and writes the events to publish to
// the outbox.
func (s *Service) RunOnce(ctx context.Context) (CycleStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := time.Now()
	var st CycleStats
	watched, err := s.watched(ctx)
	if err != nil {
		return st, err
	}
	if len(watched) == 0 {
		return st, nil
	}
	types := slices.Sorted(maps.Keys(watched))
	// Cutoffs and the evaluation time are taken once, before reading: a
	// change that lands while the cycle runs is newer than the
	// evaluated_time recorded, so the next cycle sees it.
	now := store.Now(s.cfg.Now)
	from := s.newSince.Add(-s.cfg.Lookback)
	sweep := s.newSince.IsZero() || now.Sub(s.swept) >= s.cfg.MaxAge
	if sweep {
		from = time.Time{}
	}
	err = s.pass(ctx, watched, now, from, &st, func(afterTime time.Time, afterID string) ([]candidate, error) {
		return s.unmarked(ctx, types, afterTime, afterID)
	})
	if err != nil {
		return st, err
	}
	s.newSince = now
	if sweep {
		s.swept = now
	}
	err = s.pass(ctx, watched, now, time.Time{}, &st, func(afterTime time.Time, afterID string) ([]candidate, error) {
		return s.due(ctx, now, afterTime, afterID)
	})
	if err != nil {
		return st, err
	}
	s.m.observeCycle(time.Since(start), st)
	return st, nil
}

// watched returns the watched service types and their required adapters.
func (s *Service) watched(ctx context.Context) (map[string][]string, error) {
	byType, err := s.cfg.Catalog.RequiredAdaptersByType(ctx)
	if err != nil {
		return nil, fmt.Errorf("sentinel: read service types: %w", err)
	}
	watched := map[string][]string{}
	for t, adapters := range byType {
		if len(adapters) > 0 {
			watched[t] = adapters
		}
	}
	for _, t := range s.cfg.ServiceTypes {
		if _, ok := watched[t]; !ok {
			watched[t] = byType[t]
		}
	}
	return watched, nil
}

// outcome is the decision on one candidate.
type outcome struct {
	c       candidate
	ready   bool
	publish bool
	reason  string
}

// markRow is a mark to write, as the batch statements read it.
type markRow struct {
	ID         string  `json:"id"`
	Generation int64   `json:"generation"`
	Ready      bool    `json:"ready"`
	Old        *string `json:"old,omitempty"`
	// Due is when the order is next due for a decision.
	Due string `json:"due"`
}

// deferRow sets a mark's due time without a decision: nil parks it.
type deferRow struct {
	ID  string  `json:"id"`
	Due *string `json:"due"`
}

// firstPublishLite and firstPublishPG record the first publishes of a
// batch for orders the sentinel had no mark of (an order removed since it
// was read breaks the mark's foreign key: store.ErrNoReferent); an order
// that has one by now (another sentinel's) is left out. They return the orders
// marked. As a JSON array, SQLite's json_extract of the batch's four fields
// was the largest part of a cycle over 100,000 due orders.
var firstPublishLite = store.NewChunked(2, 4, func(values string) string {
	// WHERE true: SQLite reads an upsert's ON CONFLICT after a bare FROM as
	// a join's
	return `INSERT INTO sentinel_marks (order_id, generation, published_time, evaluated_time, evaluated_generation, ready, due_time)
SELECT v.column1, v.column2, ?, ?, v.column2, v.column3, v.column4
FROM (` + values + `) AS v
WHERE true
ON CONFLICT (order_id) DO NOTHING
RETURNING order_id`
})

const firstPublishPG = `INSERT INTO sentinel_marks (order_id, generation, published_time, evaluated_time, evaluated_generation, ready, due_time)
SELECT v.id, v.generation, $5, $5, v.generation, v.ready, v.due
FROM unnest($1::text[], $2::bigint[], $3::boolean[], $4::timestamptz[]) AS v(id, generation, ready, due)
ON CONFLICT (order_id) DO NOTHING
RETURNING order_id`

func firstPublishTx(ctx context.Context, tx *store.Tx, batch []markRow, now time.Time) ([]string, error) {
	var marked []string
	collect := func(query string, args []any) error {
		rows, err := tx.Query(ctx, query, args...)
		if err != nil {
			return fmt.Errorf("record first publishes: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return fmt.Errorf("record first publishes: %w", err)
			}
			marked = append(marked, id)
		}
		return rows.Err()
	}
	if tx.Engine() == store.Postgres {
		ids, gens, ready, due := make([]string, len(batch)), make([]int64, len(batch)), make([]bool, len(batch)), make([]string, len(batch))
		for i, r := range batch {
			ids[i], gens[i], ready[i], due[i] = r.ID, r.Generation, r.Ready, r.Due
		}
		err := collect(firstPublishPG, []any{ids, gens, ready, due, now})
		return marked, err
	}
	err := firstPublishLite.Each(len(batch), []any{now, now}, func(i int, args []any) []any {
		r := batch[i]
		return append(args, r.ID, r.Generation, r.Ready, r.Due)
	}, collect)
	return marked, err
}

// nextDue is when an order decided at base (its last publish, or now) is
// due again: after debounce while not ready, after max age once ready.
func (s *Service) nextDue(base time.Time, ready bool) string {
	if ready {
		return store.FormatTime(base.Add(s.cfg.MaxAge))
	}
	return store.FormatTime(base.Add(min(s.cfg.Debounce, s.cfg.MaxAge)))
}

// recordTx writes a batch's marks and, for each publish whose mark it
// could set, the event to the outbox: three statements and one insert of
// events per batch, whatever its size. It returns what it published and
// how many another sentinel had published first. A mark refers to its
// order: with someGone, the batch's orders are looked up first and those
// removed since they were read get none.
func (s *Service) recordTx(ctx context.Context, tx *store.Tx, outs []outcome, now time.Time,
	someGone bool) (sent []outcome, lost int, err error) {
	var evaluated, first, again []markRow
	byID := make(map[string]outcome, len(outs))
	for _, o := range outs {
		r := markRow{ID: o.c.id, Generation: o.c.generation, Ready: o.ready, Due: s.nextDue(now, o.ready)}
		switch {
		case !o.publish:
			if o.c.publishedTime != nil {
				r.Due = s.nextDue(*o.c.publishedTime, o.ready)
			}
			evaluated = append(evaluated, r)
			continue
		case !o.c.marked:
			first = append(first, r)
		default:
			if o.c.publishedTime != nil {
				old := store.FormatTime(*o.c.publishedTime)
				r.Old = &old
			}
			again = append(again, r)
		}
		byID[o.c.id] = o
	}
	if someGone {
		if evaluated, first, err = s.existingTx(ctx, tx, evaluated, first); err != nil {
			return nil, 0, err
		}
	}
	if len(evaluated) > 0 {
		if _, err := s.q.SentinelMarksEvaluated(ctx, tx, store.JSON(evaluated), now); err != nil {
			return nil, 0, err
		}
	}
	var won []string
	if len(first) > 0 {
		ids, err := firstPublishTx(ctx, tx, first, now)
		if err != nil {
			return nil, 0, err
		}
		won = append(won, ids...)
	}
	if len(again) > 0 {
		ids, err := s.q.SentinelMarksRepublish(ctx, tx, store.JSON(again), &now)
		if err != nil {
			return nil, 0, err
		}
		won = append(won, ids...)
	}
	msgs := make([]events.Message, 0, len(won))
	for _, id := range won {
		o := byID[id]
		ev, err := s.event(o.c, o.reason)
		if err != nil {
			return nil, 0, err
		}
		msgs = append(msgs, events.Message{Subject: Subject(o.c.serviceType), Event: ev})
		sent = append(sent, o)
	}
	if err := events.PublishManyTx(ctx, tx, msgs); err != nil {
		return nil, 0, err
	}
	return sent, len(byID) - len(won), nil
}

// existingTx returns the marks of evaluated and first whose orders exist.
func (s *Service) existingTx(ctx context.Context, tx *store.Tx, evaluated, first []markRow) ([]markRow, []markRow, error) {
	if len(evaluated)+len(first) == 0 {
		return evaluated, first, nil
	}
	ids := make([]string, 0, len(evaluated)+len(first))
	for _, r := range slices.Concat(evaluated, first) {
		ids = append(ids, r.ID)
	}
	exist, err := s.cfg.Orders.ExistingTx(ctx, tx, ids)
	if err != nil {
		return nil, nil, err
	}
	gone := func(r markRow) bool { return !exist[r.ID] }
	return slices.DeleteFunc(evaluated, gone), slices.DeleteFunc(first, gone), nil
}

// vars are the decision's variables for one candidate.
func (s *Service) vars(c candidate, ready bool, rs []report, now time.Time) map[string]any {
	var deletedAt any
	if c.deletedAt != nil {
		deletedAt = *c.deletedAt
	}
	published := epoch
	if c.publishedTime != nil {
		published = *c.publishedTime
	}
	return map[string]any{
		"resource": map[string]any{
			"id": c.id, "project": c.project, "service_type": c.serviceType, "generation": c.generation,
			"state": c.state, "status": c.status, "deleting": c.deleting(), "deleted_at": deletedAt,
			"update_time": c.updateTime, "ready": ready, "adapters": adaptersView(rs),
		},
		"last": map[string]any{
			"published": c.publishedTime != nil, "generation": c.lastGeneration, "published_time": published,
		},
		"now":    now,
		"config": map[string]time.Duration{"debounce": s.cfg.Debounce, "max_age": s.cfg.MaxAge},
	}
}

// event builds the reconcile event of a decision.
func (s *Service) event(c candidate, reason string) (events.Event, error) {
	ev, err := events.NewEvent("/steward/"+s.cfg.Name, Subject(c.serviceType), EventData{
		ID: c.id, Kind: "catalog-item-instance", Href: "/api/v1/catalog-item-instances/" + c.id,
		Project: c.project, ServiceType: c.serviceType, Generation: c.generation,
		DeletedAt: c.deletedAt, Reason: reason,
	})
	if err != nil {
		return events.Event{}, err
	}
	return ev.WithSubject(c.id), nil
}

// Start runs cycles every Interval until Stop; a cycle that fails is logged
// and the next one runs at its time. It returns at once.
func (s *Service) Start(ctx context.Context) error {
	if err := s.cycles.Start(ctx, s.run); err != nil {
		return fmt.Errorf("sentinel: %w", err)
	}
	s.logger.InfoContext(ctx, "sentinel started", "interval", s.cfg.Interval, "debounce", s.cfg.Debounce, "max_age", s.cfg.MaxAge)
	return nil
}

func (s *Service) run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		start := time.Now()
		if !s.leads(ctx) {
			t.Reset(min(s.cfg.Interval, standbyCheck))
			continue
		}
		st, err := s.RunOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.logger.WarnContext(ctx, "sentinel cycle failed", "error", err, "published", st.Published)
		case st.Published > 0 || st.Failed > 0:
			s.logger.InfoContext(ctx, "sentinel cycle", "candidates", st.Candidates, "published", st.Published,
				"lost", st.Lost, "failed", st.Failed, "duration_ms", time.Since(start).Milliseconds())
		}
		t.Reset(max(0, s.cfg.Interval-time.Since(start)))
	}
}

// standbyCheck is how often a sentinel that does not lead asks again.
const standbyCheck = time.Second

// leads says whether this sentinel runs the next cycle, and logs and counts
// the changes: the elected replica runs the cycles, the others stand by.
func (s *Service) leads(ctx context.Context) bool {
	if s.cfg.Leads == nil {
		return true
	}
	ok, err := s.cfg.Leads(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.WarnContext(ctx, "sentinel cannot tell whether this replica leads; skipping the cycle", "error", err)
		}
		ok = false
	}
	if ok != s.leading {
		s.leading = ok
		if ok {
			s.m.leading.Set(1)
			s.logger.InfoContext(ctx, "sentinel leads: this replica runs the cycles")
		} else {
			s.m.leading.Set(0)
			s.logger.InfoContext(ctx, "sentinel stands by: another replica runs the cycles")
		}
	}
	return ok
}

// Stop ends the cycles, waiting for a running one to stop or ctx to end.
func (s *Service) Stop(ctx context.Context) error { return s.cycles.Stop(ctx) }
