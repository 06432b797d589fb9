package sprm

import (
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// The resync's claim runs every few seconds, the stale-intent sweep every
// minute and the release of a dead process's claims on every takeover:
// each walks an index of the instances it is for (issue 27), not every
// instance.
func TestSweeps_ReadOnIndexes(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		q := newQueries(engine)
		now := store.Now(nil)
		plan := storetest.QueryPlan(t, db, q.instanceResyncClaim, now, "p1", now, 100)
		storetest.WantNoScan(t, "the resync's claim", plan, "service_type_instances", "cleanup_tasks")
		plan = storetest.QueryPlan(t, db, q.instanceListStalePending, now, 100)
		storetest.WantNoScan(t, "the stale intents", plan, "service_type_instances", "cleanup_tasks")
		plan = storetest.QueryPlan(t, db, q.instanceResyncReleaseOfDead, now, store.Strings([]string{"p1", "p2"}))
		storetest.WantNoScan(t, "the release of a dead process's resync claims", plan, "service_type_instances")
		storetest.WantIndex(t, "the release of a dead process's resync claims", plan, "service_type_instances_resync_claimed_by")
	})
}
