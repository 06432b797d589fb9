package sentinel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/adapterstatus"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// catalog is a fixed set of service types and their required adapters.
type catalog map[string][]string

func (c catalog) RequiredAdaptersByType(context.Context) (map[string][]string, error) { return c, nil }

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fixture is a migrated database with orders written straight into it (the
// sentinel only reads them) and a sentinel on a settable clock.
type fixture struct {
	db    *store.DB
	clock *clock
}

func newFixture(t *testing.T, engine store.Engine) *fixture {
	return &fixture{db: storetest.Open(t, engine), clock: &clock{t: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}}
}

func (f *fixture) sentinel(t *testing.T, cfg Config) *Service {
	t.Helper()
	cfg.DB, cfg.Orders, cfg.Reports = f.db, f.orders(), f.reports()
	if cfg.Catalog == nil {
		cfg.Catalog = catalog{"cluster": {"ns"}, "vm": nil}
	}
	cfg.Now = f.clock.Now
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func (f *fixture) orders() *order.Store { return order.New(order.Config{DB: f.db}) }

// reports are the adapters' reports, read only: no report is put.
func (f *fixture) reports() *adapterstatus.Service {
	return adapterstatus.New(adapterstatus.Config{DB: f.db, Orders: f.orders(), Reconciles: noReconciles{}})
}

type noReconciles struct{}

func (noReconciles) RequestTx(context.Context, *store.Tx, string) error { return nil }

// sql rewrites ? placeholders for the engine.
func (f *fixture) sql(q string) string {
	if f.db.Engine() != store.Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (f *fixture) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := f.db.Exec(context.Background(), f.sql(q), args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// order inserts an order of a service type at generation 1.
func (f *fixture) order(t *testing.T, id, serviceType string) {
	t.Helper()
	now := f.clock.Now()
	f.exec(t, `INSERT INTO catalog_item_instances (id, project, catalog_item_id, service_type, display_name, labels,
		user_values, state, lifecycle, version, generation, attributes, instance_id, provider_name, status,
		create_time, update_time) VALUES (?, 'default', 'item', ?, '', '{}', '[]', 'up', 'simple', 1, 1, '{}', '', '', 'RUNNING', ?, ?)`,
		id, serviceType, now, now)
}

// change bumps an order's generation, as a spec change does.
func (f *fixture) change(t *testing.T, id string) {
	t.Helper()
	f.exec(t, `UPDATE catalog_item_instances SET generation = generation + 1, update_time = ? WHERE id = ?`, f.clock.Now(), id)
}

// delete marks an order deleted and bumps its generation, as DELETE does.
func (f *fixture) delete(t *testing.T, id string) {
	t.Helper()
	now := f.clock.Now()
	f.exec(t, `UPDATE catalog_item_instances SET generation = generation + 1, deleted_at = ?, update_time = ? WHERE id = ?`,
		now, now, id)
}

// report stores an adapter's report on an order with the given conditions.
func (f *fixture) report(t *testing.T, id, adapter string, generation int64, conds map[string]string) {
	t.Helper()
	var cs []map[string]string
	for typ, st := range conds {
		cs = append(cs, map[string]string{"type": typ, "status": st})
	}
	raw, _ := json.Marshal(cs)
	now := f.clock.Now()
	f.exec(t, `DELETE FROM order_adapter_statuses WHERE order_id = ? AND adapter = ?`, id, adapter)
	f.exec(t, `INSERT INTO order_adapter_statuses (order_id, adapter, observed_generation, observed_time, conditions,
		data, create_time, update_time) VALUES (?, ?, ?, ?, ?, '{}', ?, ?)`,
		id, adapter, generation, now, json.RawMessage(raw), now, now)
}

// published is an event in the outbox.
type published struct {
	Subject string
	Type    string
	Source  string
	Data    EventData
}

// drain returns the outbox's events, oldest first, and deletes them (only
// those it read: a running sentinel may be adding more).
func (f *fixture) drain(t *testing.T) []published {
	t.Helper()
	ctx := context.Background()
	rows, err := f.db.Query(ctx, `SELECT seq, subject, event FROM event_outbox ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	var out []published
	var last int64
	for rows.Next() {
		var p published
		var raw []byte
		if err := rows.Scan(&last, &p.Subject, &raw); err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Type   string    `json:"type"`
			Source string    `json:"source"`
			Data   EventData `json:"data"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatalf("outbox event %s: %v", raw, err)
		}
		p.Type, p.Source, p.Data = ev.Type, ev.Source, ev.Data
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	f.exec(t, `DELETE FROM event_outbox WHERE seq <= ?`, last)
	return out
}

// cycle runs one cycle and returns what it published, as "id:reason".
func (f *fixture) cycle(t *testing.T, s *Service) []string {
	t.Helper()
	if _, err := s.RunOnce(context.Background()); err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	var got []string
	for _, p := range f.drain(t) {
		if p.Subject != Subject(p.Data.ServiceType) || p.Type != p.Subject {
			t.Errorf("event of %s on subject %s with type %s", p.Data.ServiceType, p.Subject, p.Type)
		}
		got = append(got, p.Data.ID+":"+p.Data.Reason)
	}
	return got
}

func wantPublished(t *testing.T, step string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s: published %v, want %v", step, got, want)
	}
}

// The default decision over an order's life: new, not ready again after
// debounce, quiet once its adapters converged, changed, deleting, and
// resynced after max age; orders of types nobody waits for are not read.
func TestSentinel_DecidesOverAnOrdersLife(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		f := newFixture(t, engine)
		s := f.sentinel(t, Config{})
		f.order(t, "c1", "cluster")
		f.order(t, "v1", "vm") // no required adapters: not watched

		wantPublished(t, "a new order", f.cycle(t, s), "c1:new")
		wantPublished(t, "right after", f.cycle(t, s))
		f.clock.Add(11 * time.Second)
		wantPublished(t, "not ready after debounce", f.cycle(t, s), "c1:not_ready")

		f.report(t, "c1", "ns", 1, map[string]string{"Applied": "True", "Available": "True", "Health": "True"})
		wantPublished(t, "adapters converged", f.cycle(t, s))
		f.clock.Add(11 * time.Second)
		wantPublished(t, "ready and debounced", f.cycle(t, s))

		f.change(t, "c1")
		wantPublished(t, "a changed generation", f.cycle(t, s), "c1:generation_changed")
		f.report(t, "c1", "ns", 2, map[string]string{"Applied": "True", "Available": "True", "Health": "True"})
		wantPublished(t, "converged again", f.cycle(t, s))

		f.clock.Add(31 * time.Minute)
		wantPublished(t, "max age", f.cycle(t, s), "c1:max_age")

		f.delete(t, "c1")
		wantPublished(t, "deleted (generation bumped)", f.cycle(t, s), "c1:generation_changed")
		// Available=True at the new generation does not confirm a cleanup.
		f.report(t, "c1", "ns", 3, map[string]string{"Applied": "True", "Available": "False", "Health": "True"})
		f.clock.Add(11 * time.Second)
		wantPublished(t, "still deleting after debounce", f.cycle(t, s), "c1:deleting")
		f.report(t, "c1", "ns", 3, map[string]string{"Applied": "False", "Available": "False", "Health": "True"})
		f.clock.Add(11 * time.Second)
		wantPublished(t, "cleanup confirmed", f.cycle(t, s))
	})
}

// A configured service type is watched though nothing requires adapters
// on it, and a custom decision replaces the default.
func TestSentinel_CustomDecisionAndWatchedTypes(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		f := newFixture(t, engine)
		s := f.sentinel(t, Config{
			ServiceTypes: []string{"vm"},
			Decision: &Decision{
				Params: []Param{{Name: "fresh", Expr: "!last.published"}, {Name: "is_vm", Expr: "resource.service_type == 'vm'"}},
				Result: "fresh && is_vm",
			},
		})
		f.order(t, "c1", "cluster")
		f.order(t, "v1", "vm")
		wantPublished(t, "first cycle", f.cycle(t, s), "v1:fresh")
		f.clock.Add(time.Hour)
		wantPublished(t, "an hour later", f.cycle(t, s))
	})
}

// Several sentinels on one database, running their cycles at the same
// time, publish each decision once: the losers of the race see the mark
// they read has changed and publish nothing.
func TestSentinel_SeveralSentinelsNeverDoublePublish(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		f := newFixture(t, engine)
		const orders = 300
		for i := range orders {
			f.order(t, fmt.Sprintf("c%03d", i), "cluster")
		}
		var sentinels []*Service
		for range 3 {
			sentinels = append(sentinels, f.sentinel(t, Config{BatchSize: 50}))
		}
		for round := range 3 {
			var wg sync.WaitGroup
			stats := make([]CycleStats, len(sentinels))
			errs := make([]error, len(sentinels))
			for i, s := range sentinels {
				wg.Go(func() { stats[i], errs[i] = s.RunOnce(context.Background()) })
			}
			wg.Wait()
			total := 0
			for i := range sentinels {
				if errs[i] != nil {
					t.Fatalf("round %d: sentinel %d: %v", round, i, errs[i])
				}
				total += stats[i].Published
			}
			evs := f.drain(t)
			seen := map[string]int{}
			for _, e := range evs {
				seen[e.Data.ID]++
			}
			for id, n := range seen {
				if n > 1 {
					t.Errorf("round %d: %s published %d times", round, id, n)
				}
			}
			if len(evs) != total || len(seen) != orders {
				t.Errorf("round %d: %d events in the outbox for %d orders, sentinels counted %d", round, len(evs), len(seen), total)
			}
			f.clock.Add(11 * time.Second) // all not ready: every order is due again
		}
	})
}

// TestSentinel_OnlyTheLeaderRunsCycles: of two running sentinels given a
// Leads, only the one it names publishes; when leadership moves, the other
// takes over the orders created since.
func TestSentinel_OnlyTheLeaderRunsCycles(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		f := newFixture(t, engine)
		var mu sync.Mutex
		leader := "a"
		asked := map[string]int{} // times each was told it does not lead
		leads := func(name string) func(context.Context) (bool, error) {
			return func(context.Context) (bool, error) {
				mu.Lock()
				defer mu.Unlock()
				if leader != name {
					asked[name]++
				}
				return leader == name, nil
			}
		}
		for _, name := range []string{"a", "b"} {
			s := f.sentinel(t, Config{Name: name, Interval: 20 * time.Millisecond, Leads: leads(name)})
			if err := s.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Stop(context.Background()) })
		}
		// published waits for every order named to have had an event, and
		// says which sentinels published them.
		var seen []published
		sources := func(ids ...string) map[string]int {
			t.Helper()
			poll.Until(t, fmt.Sprintf("events for %v", ids), func() bool {
				seen = append(seen, f.drain(t)...)
				got := map[string]bool{}
				for _, p := range seen {
					got[p.Data.ID] = true
				}
				return len(got) >= len(ids)
			})
			bySource := map[string]int{}
			for _, p := range seen {
				bySource[p.Source]++
			}
			seen = nil
			return bySource
		}
		f.order(t, "c1", "cluster")
		f.order(t, "c2", "cluster")
		if got := sources("c1", "c2"); len(got) != 1 || got["/steward/a"] != 2 {
			t.Fatalf("while a leads, events by source: %v, want 2 from /steward/a only", got)
		}
		// Once a was told it no longer leads, no cycle of its runs: its
		// cycles run one after the other, each after asking.
		mu.Lock()
		leader, asked["a"] = "b", 0
		mu.Unlock()
		poll.Until(t, "a is told it does not lead", func() bool { mu.Lock(); defer mu.Unlock(); return asked["a"] > 0 })
		f.order(t, "c3", "cluster")
		if got := sources("c3"); len(got) != 1 || got["/steward/b"] != 1 {
			t.Fatalf("once b leads, events by source: %v, want 1 from /steward/b only", got)
		}
	})
}

func TestNew_RefusesABadDecision(t *testing.T) {
	t.Parallel()
	f := newFixture(t, store.SQLite)
	for name, d := range map[string]struct {
		decision Decision
		want     string
	}{
		"syntax":       {Decision{Result: "resource.ready &&"}, "message_decision.result"},
		"not a bool":   {Decision{Params: []Param{{Name: "p", Expr: "resource.generation + 1"}}, Result: "p"}, "params[0].expr"},
		"unknown var":  {Decision{Result: "nope"}, "undeclared reference"},
		"taken name":   {Decision{Params: []Param{{Name: "now", Expr: "true"}}, Result: "true"}, `"now": already taken`},
		"duplicate":    {Decision{Params: []Param{{Name: "a", Expr: "true"}, {Name: "a", Expr: "false"}}, Result: "a"}, "params[1].name"},
		"bad name":     {Decision{Params: []Param{{Name: "A-b", Expr: "true"}}, Result: "true"}, "lower-case identifier"},
		"empty result": {Decision{}, "message_decision.result: required"},
	} {
		_, err := New(Config{DB: f.db, Orders: f.orders(), Reports: f.reports(), Catalog: catalog{}, Decision: &d.decision})
		if err == nil || !strings.Contains(err.Error(), d.want) {
			t.Errorf("%s: New = %v, want an error containing %q", name, err, d.want)
		}
	}
}

// A decision that fails at run time for one order (here a param that
// divides by zero for it) leaves the others published and that one
// unmarked, to be decided again.
func TestSentinel_ADecisionErrorSkipsOnlyThatOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, store.SQLite)
	s := f.sentinel(t, Config{Decision: &Decision{
		Params: []Param{{Name: "ok", Expr: "10 / (resource.id == 'bad' ? 0 : 1) > 0"}},
		Result: "ok",
	}})
	f.order(t, "bad", "cluster")
	f.order(t, "good", "cluster")
	st, err := s.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Failed != 1 || st.Published != 1 {
		t.Errorf("stats = %+v, want 1 failed and 1 published", st)
	}
	wantPublished(t, "outbox", func() []string {
		var ids []string
		for _, p := range f.drain(t) {
			ids = append(ids, p.Data.ID)
		}
		return ids
	}(), "good")
	if st, _ := s.RunOnce(context.Background()); st.Candidates != 1 || st.Failed != 1 {
		t.Errorf("second cycle = %+v, want the failed order decided again", st)
	}
}

// A cycle's cost follows the due work, not the inventory (issue 27): its
// reads walk an index from where the work starts and neither scans the
// marks (the orders' reads are internal/order's, tested there).
func TestSentinel_CycleReadsOnIndexes(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		f := newFixture(t, engine)
		s := f.sentinel(t, Config{})
		for i := range 50 {
			f.order(t, fmt.Sprintf("c%02d", i), "cluster")
		}
		f.cycle(t, s) // marks them all
		now := f.clock.Now()
		due := storetest.QueryPlan(t, f.db, s.q.sentinelDue, now, time.Time{}, "", 500)
		storetest.WantNoScan(t, "the due marks' query", due, "sentinel_marks")
		marked := storetest.QueryPlan(t, f.db, s.q.sentinelMarked, store.Strings([]string{"c01", "c02"}))
		storetest.WantNoScan(t, "the new orders' marks' query", marked, "sentinel_marks")
		t.Logf("due:\n%s\nmarked:\n%s", due, marked)
	})
}

// A quiet inventory is read no more: a cycle decides only what a change
// made due; a terminal order's mark is parked and never read again; and a
// create that committed long after its create time is found by the sweep
// from the first order that runs every max age.
func TestSentinel_DecidesOnlyWhatIsDue(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		f := newFixture(t, engine)
		s := f.sentinel(t, Config{})
		for i := range 20 {
			id := fmt.Sprintf("c%02d", i)
			f.order(t, id, "cluster")
			f.report(t, id, "ns", 1, map[string]string{"Applied": "True", "Available": "True", "Health": "True"})
		}
		run := func() CycleStats {
			t.Helper()
			st, err := s.RunOnce(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			f.drain(t)
			return st
		}
		if st := run(); st.Candidates != 20 || st.Published != 20 {
			t.Fatalf("first cycle: %+v, want 20 new orders decided and published", st)
		}
		f.clock.Add(time.Minute)
		if st := run(); st.Candidates != 0 {
			t.Errorf("a quiet inventory: %d candidates, want 0", st.Candidates)
		}
		f.clock.Add(time.Second)
		f.change(t, "c07")
		if st := run(); st.Candidates != 1 || st.Published != 1 {
			t.Errorf("one order changed: %+v, want that one decided and published", st)
		}

		f.exec(t, `UPDATE catalog_item_instances SET terminal = ? WHERE id = 'c03'`, true)
		f.clock.Add(time.Second)
		f.change(t, "c03") // its last change, which makes it due
		if st := run(); st.Candidates != 0 {
			t.Errorf("a terminal order is decided: %+v", st)
		}
		var parked int
		if err := f.db.QueryRow(context.Background(),
			`SELECT COUNT(*) FROM sentinel_marks WHERE order_id = 'c03' AND due_time IS NULL`).Scan(&parked); err != nil || parked != 1 {
			t.Errorf("the terminal order's mark is not parked (%d, %v)", parked, err)
		}

		// An order whose create committed a minute after its create time
		// (past the lookback) is not among the new orders of the next
		// cycle, but the sweep after max age finds it.
		late := f.clock.Now().Add(-time.Minute)
		f.exec(t, `INSERT INTO catalog_item_instances (id, project, catalog_item_id, service_type, display_name, labels,
			user_values, state, lifecycle, version, generation, attributes, instance_id, provider_name, status,
			create_time, update_time) VALUES ('late', 'default', 'item', 'cluster', '', '{}', '[]', 'up', 'simple', 1, 1, '{}', '', '', 'RUNNING', ?, ?)`,
			late, late)
		f.clock.Add(time.Second)
		if st := run(); st.Candidates != 0 {
			t.Errorf("the next cycle: %+v, want nothing (the late order is past the lookback)", st)
		}
		f.clock.Add(31 * time.Minute)
		st := run()
		if st.Published != 20 { // 19 live orders past max age, and the late one
			t.Errorf("after max age: %+v, want 19 resynced and the late order published", st)
		}
		var marked int
		if err := f.db.QueryRow(context.Background(), `SELECT COUNT(*) FROM sentinel_marks WHERE order_id = 'late'`).Scan(&marked); err != nil || marked != 1 {
			t.Errorf("the late order has no mark after the sweep (%d, %v)", marked, err)
		}
	})
}

// An order removed between a batch's read and its write gets no mark (its
// mark would refer to nothing), and the rest of the batch is written: a
// first publish is lost, an evaluation dropped.
func TestSentinel_AnOrderRemovedMeanwhileGetsNoMark(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		f := newFixture(t, engine)
		s := f.sentinel(t, Config{})
		for _, id := range []string{"kept", "gone", "gone-quiet"} {
			f.order(t, id, "cluster")
		}
		batch, err := s.unmarked(context.Background(), []string{"cluster"}, time.Time{}, "")
		if err != nil || len(batch) != 3 {
			t.Fatalf("unmarked = %d, %v; want the 3 orders", len(batch), err)
		}
		f.exec(t, `DELETE FROM catalog_item_instances WHERE id IN ('gone', 'gone-quiet')`)
		var outs []outcome
		for _, c := range batch {
			outs = append(outs, outcome{c: c, publish: c.id != "gone-quiet", reason: "new"})
		}
		in := make(chan decidedBatch, 1)
		in <- decidedBatch{outs: outs}
		close(in)
		var st CycleStats
		if err := s.writeBatches(context.Background(), func() {}, in, f.clock.Now(), &st); err != nil {
			t.Fatalf("writeBatches: %v", err)
		}
		if st.Published != 1 || st.Lost != 1 {
			t.Errorf("stats = %+v, want kept published and gone lost", st)
		}
		var marks int
		if err := f.db.QueryRow(context.Background(), `SELECT COUNT(*) FROM sentinel_marks`).Scan(&marks); err != nil || marks != 1 {
			t.Errorf("marks = %d, %v; want kept's alone", marks, err)
		}
		wantPublished(t, "the batch", func() []string {
			var got []string
			for _, p := range f.drain(t) {
				got = append(got, p.Data.ID)
			}
			return got
		}(), "kept")
	})
}
