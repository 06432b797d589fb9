package sentinel

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A batch whose write fails ends the cycle with its error, while the next
// batches are being read and decided beside it: the batches written before
// it stay published, nothing after it is, and the next cycle publishes the
// rest, each order once.
func TestSentinel_AFailedWriteEndsTheCycleAndTheNextFinishes(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		f := newFixture(t, engine)
		const orders = 300
		for i := range orders {
			f.order(t, fmt.Sprintf("c%03d", i), "cluster")
		}
		// c150 is the first order of the fourth batch of 50.
		if engine == store.Postgres {
			f.exec(t, `CREATE FUNCTION fail_c150() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.order_id = 'c150' THEN RAISE EXCEPTION 'boom'; END IF;
    RETURN NEW;
END $$`)
			f.exec(t, `CREATE TRIGGER fail_c150 BEFORE INSERT ON sentinel_marks FOR EACH ROW EXECUTE FUNCTION fail_c150()`)
		} else {
			f.exec(t, `CREATE TRIGGER fail_c150 BEFORE INSERT ON sentinel_marks WHEN NEW.order_id = 'c150'
BEGIN SELECT RAISE(ABORT, 'boom'); END`)
		}
		s := f.sentinel(t, Config{BatchSize: 50})
		if _, err := s.RunOnce(context.Background()); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("cycle with a failing write: %v, want the write's error", err)
		}
		seen := map[string]int{}
		for _, p := range f.drain(t) {
			seen[p.Data.ID]++
		}
		if len(seen) != 150 || seen["c149"] != 1 || seen["c150"] != 0 {
			t.Errorf("after the failed cycle: %d orders published (c149 %d times, c150 %d); want the 3 batches before the failing one",
				len(seen), seen["c149"], seen["c150"])
		}
		f.exec(t, `DROP TRIGGER fail_c150`+map[bool]string{true: " ON sentinel_marks"}[engine == store.Postgres])
		if _, err := s.RunOnce(context.Background()); err != nil {
			t.Fatalf("next cycle: %v", err)
		}
		for _, p := range f.drain(t) {
			seen[p.Data.ID]++
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("%s published %d times", id, n)
			}
		}
		if len(seen) != orders {
			t.Errorf("%d orders published over both cycles, want %d", len(seen), orders)
		}
	})
}
