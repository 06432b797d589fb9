package order

import (
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// The reads the sentinel makes each cycle cost what they return, not the
// inventory: the new orders on the (create_time, id) index, batches by id
// on the primary key.
func TestReads_WalkAnIndex(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		q := newQueries(engine)
		ids := store.Strings([]string{"a", "b"})
		for name, plan := range map[string]string{
			"created after": storetest.QueryPlan(t, db, q.orderSummariesCreatedAfter, store.Strings([]string{"vm", "db"}),
				time.Now(), "", 500),
			"summaries": storetest.QueryPlan(t, db, q.orderSummaries, ids),
			"existing":  storetest.QueryPlan(t, db, q.ordersExisting, ids),
		} {
			storetest.WantNoScan(t, name, plan, "catalog_item_instances")
		}
	})
}
