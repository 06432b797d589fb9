package placement

import (
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// The stalled-work sweep runs every minute: its reads walk an index of
// what waits (issue 27), not every resource ever made, which they did
// while an answered create's resource stayed PENDING.
func TestSweepStalled_ReadsOnIndexes(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		q := newQueries(engine)
		now := store.Now(nil)
		plan := storetest.QueryPlan(t, db, q.resourcesPendingStalled, now)
		storetest.WantNoScan(t, "the stalled creates' query", plan, "resources")
		plan = storetest.QueryPlan(t, db, q.resourceRehydrationsStalled, now)
		storetest.WantNoScan(t, "the stalled rehydrations' query", plan, "resources")
	})
}
