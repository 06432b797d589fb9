package reconcile_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

func record(t *testing.T, db *store.DB, q *reconcile.Queue, c reconcile.Change) {
	t.Helper()
	if err := db.InTx(t.Context(), func(tx *store.Tx) error { return q.RecordTx(t.Context(), tx, c) }); err != nil {
		t.Fatal(err)
	}
}

func take(t *testing.T, db *store.DB, q *reconcile.Queue, orderID string, rollback bool) []reconcile.Change {
	t.Helper()
	var got []reconcile.Change
	err := db.InTx(t.Context(), func(tx *store.Tx) error {
		var err error
		if got, err = q.TakeTx(t.Context(), tx, orderID); err != nil || !rollback {
			return err
		}
		return context.Canceled
	})
	if err != nil && !rollback {
		t.Fatal(err)
	}
	return got
}

// A change is recorded for its order, taken once in the order recorded,
// and stays when the reconcile that took it rolls back; a bare request
// takes with the changes and is none of them. A change with no order (an
// instance made through the SPRM's own API) is not recorded. What no
// worker took is handed out by the sweep of a queue that starts.
func TestQueue_ChangesAreTakenOnceInOrder(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		q := reconcile.New(db, nil)

		restarts := int64(2)
		record(t, db, q, reconcile.Change{OrderID: "o", Kind: reconcile.KindStatus, InstanceID: "i1",
			Status: "RUNNING", Via: "report", RestartCount: &restarts})
		request(t, db, q, "o")
		record(t, db, q, reconcile.Change{OrderID: "p", Kind: reconcile.KindStatus, InstanceID: "j1", Status: "FAILED"})
		record(t, db, q, reconcile.Change{OrderID: "o", Kind: reconcile.KindReplaced, InstanceID: "i2",
			PreviousID: "i1", OperationID: "op", ProviderName: "sp", Status: "PROVISIONING"})
		record(t, db, q, reconcile.Change{OrderID: "", Kind: reconcile.KindStatus, InstanceID: "x", Status: "RUNNING"})
		request(t, db, q, "r")

		if got := take(t, db, q, "o", true); len(got) != 2 {
			t.Fatalf("took %d changes of o in a rolled-back reconcile, want 2", len(got))
		}
		got := take(t, db, q, "o", false)
		if len(got) != 2 {
			t.Fatalf("changes of o after a rollback = %+v, want both still there", got)
		}
		first, second := got[0], got[1]
		if first.Kind != reconcile.KindStatus || first.InstanceID != "i1" || first.Status != "RUNNING" ||
			first.Via != "report" || first.RestartCount == nil || *first.RestartCount != 2 {
			t.Errorf("first change = %+v", first)
		}
		if second.Kind != reconcile.KindReplaced || second.InstanceID != "i2" || second.PreviousID != "i1" ||
			second.OperationID != "op" || second.ProviderName != "sp" || second.Status != "PROVISIONING" ||
			second.RestartCount != nil {
			t.Errorf("second change = %+v", second)
		}
		if again := take(t, db, q, "o", false); len(again) != 0 {
			t.Errorf("changes of o taken twice: %+v", again)
		}

		// p and r were never taken: a queue that starts reconciles them,
		// p with its change, r with none; o has nothing waiting.
		other := reconcile.New(db, nil)
		r := &reconciles{db: db, q: other}
		start(t, other, r)
		poll.Until(t, "p and r reconciled", func() bool {
			return slices.Equal(slices.Compact(r.reconciled()), []string{"p", "r"})
		})
		r.mu.Lock()
		defer r.mu.Unlock()
		if p := r.changes["p"]; len(p) != 1 || p[0].Status != "FAILED" || p[0].InstanceID != "j1" {
			t.Errorf("changes of p = %+v, want its one FAILED", p)
		}
		if len(r.changes["r"]) != 0 {
			t.Errorf("changes of r = %+v, want none: a bare request is no change", r.changes["r"])
		}
	})
}
