package tokens

import (
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Every console request reads its session by key, and the sweep deletes
// what expired by an index: neither reads every session.
func TestSessions_ReadAndSweepOnIndexes(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		q := newQueries(engine)
		now := store.Now(nil)
		storetest.WantNoScan(t, "the session read", storetest.QueryPlan(t, db, q.sessionGet, sessionKey("x")), "console_sessions")
		storetest.WantNoScan(t, "the session sweep", storetest.QueryPlan(t, db, q.sessionSweep, now), "console_sessions")
		storetest.WantIndex(t, "the session sweep", storetest.QueryPlan(t, db, q.sessionSweep, now), "console_sessions_idle_expire_time")
	})
}
