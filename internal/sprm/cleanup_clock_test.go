package sprm

import (
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A task claimed by a worker that died is taken again only once its claim
// has expired on the clock (ClaimTimeout), not before.
func TestRunCleanup_TakesATaskBackWhenItsClaimExpires(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		c := setupClocked(t, engine, func(cfg *Config) { cfg.ClaimTimeout = time.Minute })
		c.intent(t, "old")
		c.queueCleanup(t, "old")
		// A worker claims the task and dies.
		if tasks, err := c.s.claim(t.Context()); err != nil || len(tasks) != 1 {
			t.Fatalf("claim = %v, %v; want the task", tasks, err)
		}

		c.clock.Advance(time.Minute - time.Second)
		if res, err := c.s.RunCleanup(t.Context()); err != nil || res != (CleanupResult{}) {
			t.Fatalf("pass while the claim holds = %+v, %v; want nothing done", res, err)
		}
		if _, deletes := c.prov.counts(); deletes != 0 {
			t.Fatalf("the provider got %d deletes while another worker held the task", deletes)
		}

		c.clock.Advance(2 * time.Second)
		if res, err := c.s.RunCleanup(t.Context()); err != nil || res.Done != 1 {
			t.Fatalf("pass after the claim expired = %+v, %v; want the task done", res, err)
		}
		c.wantDeleted(t, "old")
	})
}

// A task claimed by a process known dead (peers) goes back at once, long
// before its claim expires; one claimed by another, live process does not.
func TestReapTx_ReleasesTheClaimsOfADeadProcessAtOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		c := setupClocked(t, engine, func(cfg *Config) { cfg.ClaimTimeout = time.Hour; cfg.ProcessID = "p-1" })
		c.intent(t, "old")
		c.queueCleanup(t, "old")
		if tasks, err := c.s.claim(t.Context()); err != nil || len(tasks) != 1 {
			t.Fatalf("claim = %v, %v; want the task", tasks, err)
		}
		reap := func(dead string) {
			t.Helper()
			if err := c.s.cfg.DB.InTx(t.Context(), func(tx *store.Tx) error {
				return c.s.ReapTx(t.Context(), tx, []string{dead})
			}); err != nil {
				t.Fatal(err)
			}
		}
		reap("p-2")
		if res, err := c.s.RunCleanup(t.Context()); err != nil || res != (CleanupResult{}) {
			t.Fatalf("pass after another process died = %+v, %v; want nothing (the claim holds)", res, err)
		}
		reap("p-1")
		if res, err := c.s.RunCleanup(t.Context()); err != nil || res.Done != 1 {
			t.Fatalf("pass after the claimant died = %+v, %v; want the task done", res, err)
		}
		c.wantDeleted(t, "old")
	})
}

// An intent whose create request died (no outcome, no task) is queued for
// cleanup once it is older than PendingGrace on the clock, and not before.
func TestRunCleanup_SweepsAnIntentOnlyAfterPendingGrace(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		c := setupClocked(t, engine, func(cfg *Config) { cfg.PendingGrace = time.Minute })
		c.intent(t, "orphan")

		c.clock.Advance(time.Minute)
		if res, err := c.s.RunCleanup(t.Context()); err != nil || res != (CleanupResult{}) {
			t.Fatalf("pass within the grace = %+v, %v; want nothing swept", res, err)
		}
		c.clock.Advance(time.Second)
		if res, err := c.s.RunCleanup(t.Context()); err != nil || res.Swept != 1 || res.Done != 1 {
			t.Fatalf("pass after the grace = %+v, %v; want the intent swept and cleaned up", res, err)
		}
		c.wantDeleted(t, "orphan")
	})
}

// A failed attempt is recorded at the clock's time, and a retry happens at
// the next pass, however soon: cleanup does not back off by time.
func TestRunCleanup_RecordsFailedAttemptsAtTheClocksTime(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		c := setupClocked(t, engine, func(cfg *Config) { cfg.CleanupMaxRetries = 2 })
		c.intent(t, "old")
		c.queueCleanup(t, "old")
		task, err := taskFromRow(c.s.q.CleanupTaskGetByInstance(t.Context(), c.s.cfg.DB, "old"))
		if err != nil {
			t.Fatal(err)
		}
		c.prov.set(true, 0) // deletes fail; health is not checked in these passes
		for i, want := range []string{TaskPending, TaskFailed} {
			c.clock.Advance(time.Second)
			if _, err := c.s.RunCleanup(t.Context()); err != nil {
				t.Fatal(err)
			}
			got, err := c.s.CleanupTask(t.Context(), task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != want || got.RetryCount != i+1 || got.LastAttempt == nil || !got.LastAttempt.Equal(c.clock.Now()) {
				t.Errorf("after pass %d: %s, %d retries, last attempt %v; want %s, %d, %v", i+1, got.Status,
					got.RetryCount, got.LastAttempt, want, i+1, c.clock.Now())
			}
		}
	})
}
