package httpapi

import (
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// The idempotency prune runs on a schedule: it deletes what expired by an
// index (issue 27), not by reading every key.
func TestIdempotencyPrune_ReadsOnIndex(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		now := store.Now(nil)
		plan := storetest.QueryPlan(t, db, newQueries(engine).idempotencyKeyPrune, now, now)
		storetest.WantNoScan(t, "the prune", plan, "idempotency_keys")
	})
}
