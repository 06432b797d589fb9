package sprm

import (
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// The live-instance counts placement reads are kept by triggers; they must
// equal a count of the rows whatever path an instance takes: created,
// refused (intent removed), deleted by the provider, marked deleted.
func TestProviderLoads_CountsMatchTheInstancesOnEveryPath(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		c := setupClocked(t, engine, nil)
		ctx := t.Context()
		check := func(step string) { t.Helper(); c.wantLiveCounted(t, step) }
		check("none")
		for _, id := range []string{"a", "b", "c", "d"} {
			c.intent(t, id)
		}
		check("four intents")
		if _, err := c.s.q.InstanceDeleteIntent(ctx, c.s.cfg.DB, "a"); err != nil {
			t.Fatal(err)
		}
		check("an intent refused")
		c.markDeleted(t, "b")
		check("one marked deleted")
		// A report that keeps it live, then the provider's DELETED.
		for _, status := range []string{"RUNNING", "DELETED", "DELETED"} {
			at := c.s.now()
			c.clock.Advance(1)
			if err := c.s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
				_, err := c.s.q.InstanceApplyStatus(ctx, tx, InstanceApplyStatusParams{Status: status, ObservedTime: &at,
					UpdateTime: at, DeletedAt: at, DeleteTime: at, StatusTime: &at, ResyncTime: noResync, ID: "c"})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			check("report " + status)
		}
	})
}

// Migration 00038 splits PostgreSQL's counts into shards: instances counted
// before it (one row per provider) are counted after it, and their deletion
// afterwards is taken off the right shard. Down and up again on both
// engines (SQLite's 00038 changes nothing).
func TestProviderLoads_CountsSurviveTheShardMigration(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		c := setupClocked(t, engine, nil)
		ctx := t.Context()
		c.intent(t, "a")
		if err := c.s.cfg.DB.MigrateTo(ctx, 37); err != nil {
			t.Fatal(err)
		}
		c.wantLiveCounted(t, "down to 37")
		for _, id := range []string{"b", "c", "d"} {
			c.intent(t, id)
		}
		c.wantLiveCounted(t, "created before 00038")
		if err := c.s.cfg.DB.MigrateTo(ctx, 38); err != nil {
			t.Fatal(err)
		}
		c.wantLiveCounted(t, "up to 38")
		for _, id := range []string{"a", "b", "c"} {
			c.markDeleted(t, id)
			c.wantLiveCounted(t, "deleted "+id)
		}
		c.intent(t, "e")
		c.wantLiveCounted(t, "created after 00038")
	})
}

// wantLiveCounted fails the test unless placement's live count of vm-sp is
// a count of its instances not deleted.
func (c clocked) wantLiveCounted(t *testing.T, step string) {
	t.Helper()
	var want int
	if err := c.s.cfg.DB.QueryRow(t.Context(),
		"SELECT count(*) FROM service_type_instances WHERE deleted_at IS NULL").Scan(&want); err != nil {
		t.Fatal(err)
	}
	// The counts ProviderLoads reads, without the providers, whose columns
	// change after 00038.
	counts, err := c.s.q.InstanceCountLivePerProvider(t.Context(), c.s.cfg.DB)
	live := map[string]int64{}
	for _, n := range counts {
		live[n.ProviderName] += n.Live
	}
	if err != nil || live["vm-sp"] != int64(want) {
		t.Fatalf("%s: live counts = %+v, %v; want vm-sp with %d live", step, counts, err, want)
	}
}

// markDeleted marks an instance deleted, as the SPRM does when its provider
// no longer holds it.
func (c clocked) markDeleted(t *testing.T, id string) {
	t.Helper()
	// The status writes return the instance's order: on SQLite a query
	// with rows runs on the writer only in a transaction.
	if err := c.s.cfg.DB.InTx(t.Context(), func(tx *store.Tx) error {
		_, err := c.s.q.InstanceMarkDeleted(t.Context(), tx, InstanceMarkDeletedParams{DeletedAt: c.s.now(),
			DeleteTime: c.s.now(), UpdateTime: c.s.now(), ID: id})
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
