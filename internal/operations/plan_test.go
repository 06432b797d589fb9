package operations

import (
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A request run again with its Idempotency-Key finds its operation on the
// partial index of request keys, not among every operation of its project
// (issue 46: a bound key cannot be proved non-empty without the guard).
func TestByRequestKey_ReadsOnTheRequestKeyIndex(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		plan := storetest.QueryPlan(t, db, newQueries(engine).operationGetByRequestKey, "team-a", "key")
		storetest.WantIndex(t, "an operation by its request key", plan, "operations_request_key")
	})
}
