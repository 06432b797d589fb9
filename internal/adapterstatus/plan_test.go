package adapterstatus

import (
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// The sentinel reads a batch's reports each cycle: on the reports' key,
// whatever the number stored.
func TestOfOrders_WalksTheKey(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		plan := storetest.QueryPlan(t, storetest.Open(t, engine), newQueries(engine).adapterStatusOfOrders,
			store.Strings([]string{"a", "b"}))
		storetest.WantNoScan(t, "a batch's reports", plan, "order_adapter_statuses")
	})
}
