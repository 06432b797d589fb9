package lifecycle

import (
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A create run again with its Idempotency-Key finds its order on the
// partial index of the non-empty request keys (issue 46: without a guard
// that the key is not empty, which a bound key cannot be proved to pass,
// every create with a key scanned every order: 47% of the server's CPU
// under load).
func TestOrderOfRequest_ReadsOnTheRequestKeyIndex(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		plan := storetest.QueryPlan(t, db, newQueries(engine).orderIDByRequestKey, "key")
		storetest.WantIndex(t, "an order by its request key", plan, "catalog_item_instances_request_key")
	})
}
