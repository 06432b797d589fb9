package repair

import (
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// The sweep of silent repair operations runs every minute: it walks an
// index of the unfinished ones (issue 27), not every operation ever run.
func TestSweepSilent_ReadsOnIndex(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		plan := storetest.QueryPlan(t, db, newQueries(engine).repairStale, store.Now(nil))
		storetest.WantNoScan(t, "the silent operations", plan, "repair_operations")
	})
}
