package sentinel

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// BenchmarkSentinelCycle measures one decision cycle over an inventory of
// orders of a watched type, on each engine:
//
//   - due: every order is due (the first cycle, or a max-age sweep): the
//     query returns all of them, each is decided, marked and its event
//     written to the outbox;
//   - quiet: nothing is due: the query alone, which is what a sentinel
//     pays every interval in steady state.
//
// Run: go test ./internal/sentinel -run '^$' -bench SentinelCycle -benchtime 3x
// (add STEWARD_TEST_DATABASE_URL for PostgreSQL; SENTINEL_BENCH_ORDERS=
// 10000,1000000 sets the sizes). The inventory is built once per size;
// "ns/op" is one cycle. A due cycle is a new sentinel's first: it reads
// every order as new.
func BenchmarkSentinelCycle(b *testing.B) {
	for _, engine := range storetest.Engines() {
		for _, n := range benchSizes(b) {
			b.Run(fmt.Sprintf("%s/orders=%d", engine, n), func(b *testing.B) {
				f := &fixture{db: storetest.Open(b, engine), clock: &clock{t: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}}
				f.bulkOrders(b, n)
				newSentinel := func() *Service {
					s, err := New(Config{DB: f.db, Orders: f.orders(), Reports: f.reports(), Catalog: catalog{"cluster": {"ns"}},
						Now: f.clock.Now})
					if err != nil {
						b.Fatal(err)
					}
					return s
				}
				s := newSentinel()
				ctx := context.Background()
				b.Run("due", func(b *testing.B) {
					for b.Loop() {
						b.StopTimer()
						f.execB(b, `DELETE FROM sentinel_marks`)
						f.execB(b, `DELETE FROM event_outbox`)
						s = newSentinel()
						b.StartTimer()
						st, err := s.RunOnce(ctx)
						if err != nil || st.Published != n {
							b.Fatalf("cycle = %+v, %v; want %d published", st, err, n)
						}
					}
					b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "orders/s")
				})
				b.Run("quiet", func(b *testing.B) {
					for b.Loop() {
						st, err := s.RunOnce(ctx)
						if err != nil || st.Candidates != 0 {
							b.Fatalf("cycle = %+v, %v; want no candidates", st, err)
						}
					}
				})
			})
		}
	}
}

// benchSizes are the inventories to measure: SENTINEL_BENCH_ORDERS, a
// comma-separated list, or 10,000 and 100,000.
func benchSizes(b *testing.B) []int {
	env := os.Getenv("SENTINEL_BENCH_ORDERS")
	if env == "" {
		return []int{10_000, 100_000}
	}
	var sizes []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("SENTINEL_BENCH_ORDERS=%q: %q is not a positive count", env, f)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

func (f *fixture) execB(b *testing.B, q string, args ...any) {
	b.Helper()
	if _, err := f.db.Exec(context.Background(), f.sql(q), args...); err != nil {
		b.Fatalf("%s: %v", q, err)
	}
}

// bulkOrders inserts n orders of type cluster in one statement, created
// and last changed an hour before the clock's time: an inventory, not a
// burst of creates.
func (f *fixture) bulkOrders(b *testing.B, n int) {
	b.Helper()
	now := f.clock.Now().Add(-time.Hour)
	cols := `(id, project, catalog_item_id, service_type, display_name, labels, user_values, state, lifecycle,
		version, generation, attributes, instance_id, provider_name, status, create_time, update_time)`
	q := `INSERT INTO catalog_item_instances ` + cols + `
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
		SELECT printf('o%07d', i), 'default', 'item', 'cluster', '', '{}', '[]', 'up', 'simple', 1, 1, '{}', '', '',
		       'RUNNING', ?, ? FROM n`
	if f.db.Engine() == store.Postgres {
		q = `INSERT INTO catalog_item_instances ` + cols + `
		SELECT 'o' || lpad(i::text, 7, '0'), 'default', 'item', 'cluster', '', '{}', '[]', 'up', 'simple', 1, 1, '{}',
		       '', '', 'RUNNING', $2, $3 FROM generate_series(0, $1 - 1) AS i`
	}
	if _, err := f.db.Exec(context.Background(), q, n, now, now); err != nil {
		b.Fatalf("insert %d orders: %v", n, err)
	}
	// The statistics autovacuum would gather before a real inventory's
	// next cycle: without them PostgreSQL plans for an empty table.
	if f.db.Engine() == store.Postgres {
		if _, err := f.db.Exec(context.Background(), `ANALYZE`); err != nil {
			b.Fatalf("analyze: %v", err)
		}
	}
}
