package lifecycle

import (
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// The deletion gate's sweep and the tombstone purge run on a schedule
// whatever the inventory: their reads walk an index of the orders they
// are for (issue 27), not every order. The deletion sweep's walked the
// primary key past a million live orders on PostgreSQL, 860 ms a run.
func TestSweeps_ReadOnIndexes(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		q := newQueries(engine)
		plan := storetest.QueryPlan(t, db, q.orderListWaitingDeletion, 500)
		storetest.WantNoScan(t, "the orders waiting at the deletion gate", plan, "catalog_item_instances")
		plan = storetest.QueryPlan(t, db, q.orderListExpired, store.Now(nil), 100)
		storetest.WantNoScan(t, "the expired tombstones", plan, "catalog_item_instances")
	})
}
