package reconcile_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// reconciles records the orders reconciled, each taking its request as the
// lifecycle's reconcile does; a reconcile of an order in hold waits for its
// release before it takes the request.
type reconciles struct {
	db      *store.DB
	q       *reconcile.Queue
	mu      sync.Mutex
	done    []string
	changes map[string][]reconcile.Change // taken, by order
	hold    map[string]chan struct{}
}

func (r *reconciles) reconcile(ctx context.Context, id string) error {
	r.mu.Lock()
	gate := r.hold[id]
	delete(r.hold, id)
	r.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done(): // the queue stops (the test failed before the release)
			return ctx.Err()
		}
	}
	var taken []reconcile.Change
	if err := r.db.InTx(ctx, func(tx *store.Tx) (err error) {
		taken, err = r.q.TakeTx(ctx, tx, id)
		return err
	}); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = append(r.done, id)
	if r.changes == nil {
		r.changes = make(map[string][]reconcile.Change)
	}
	r.changes[id] = append(r.changes[id], taken...)
	return nil
}

func (r *reconciles) reconciled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.done)
	slices.Sort(out)
	return out
}

func request(t *testing.T, db *store.DB, q *reconcile.Queue, orderID string) {
	t.Helper()
	if err := db.InTx(t.Context(), func(tx *store.Tx) error { return q.RequestTx(t.Context(), tx, orderID) }); err != nil {
		t.Fatal(err)
	}
}

func start(t *testing.T, q *reconcile.Queue, r *reconciles) {
	t.Helper()
	if err := q.Start(t.Context(), 4, r.reconcile); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
}

// A committed request hands the order to a worker, which reconciles it;
// asking again while the request waits is the same reconcile, a
// rolled-back request is none, and a request after the take is a reconcile
// again. A request no worker of its process took (the process died) is
// taken by another's sweep when it starts.
func TestQueue_OneReconcilePerOrderWhileTheRequestWaits(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		q := reconcile.New(db, nil)
		// a's reconcile is held below for as long as the test takes; the
		// sweep must not take a's request meanwhile.
		q.SetSweepAfter(time.Hour)
		release := make(chan struct{})
		r := &reconciles{db: db, q: q, hold: map[string]chan struct{}{"a": release}}
		start(t, q, r)

		request(t, db, q, "a") // its reconcile waits for release
		request(t, db, q, "a")
		request(t, db, q, "b")
		request(t, db, q, "a")
		_ = db.InTx(t.Context(), func(tx *store.Tx) error {
			if err := q.RequestTx(t.Context(), tx, "c"); err != nil {
				t.Fatal(err)
			}
			return context.Canceled
		})
		poll.Until(t, "b reconciled", func() bool { return slices.Equal(r.reconciled(), []string{"b"}) })
		close(release)
		poll.Until(t, "a reconciled", func() bool { return slices.Equal(r.reconciled(), []string{"a", "b"}) })

		request(t, db, q, "a")
		poll.Until(t, "a reconciled again", func() bool { return slices.Equal(r.reconciled(), []string{"a", "a", "b"}) })

		// Another process's request, never reconciled there: a queue that
		// starts takes it at once.
		other := reconcile.New(db, nil)
		request(t, db, other, "d")
		if got := r.reconciled(); slices.Contains(got, "d") {
			t.Fatalf("reconciled %v: d's wake-up went to its own process, which runs no workers", got)
		}
		late := &reconciles{db: db, q: other}
		start(t, other, late)
		poll.Until(t, "d taken by the starting queue's sweep", func() bool { return slices.Contains(late.reconciled(), "d") })
		if err := q.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got, want := r.reconciled(), []string{"a", "a", "b"}; !slices.Equal(got, want) {
			t.Errorf("reconciled %v, want %v: one per request taken, none for the rolled-back c", got, want)
		}
	})
}

// A reconcile that fails, before its take or after, leaves the request for
// the sweep, which hands the order out again.
func TestQueue_AFailedReconcileIsSweptAgain(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		q := reconcile.New(db, nil)
		q.SetSweepAfter(10 * time.Millisecond)
		r := &reconciles{db: db, q: q}
		var mu sync.Mutex
		calls := 0
		failFirst := func(ctx context.Context, id string) error {
			mu.Lock()
			calls++
			first := calls == 1
			mu.Unlock()
			if first {
				return errors.New("the database went away before the take")
			}
			return r.reconcile(ctx, id)
		}
		if err := q.Start(t.Context(), 2, failFirst); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Stop(context.Background()) })
		request(t, db, q, "f")
		poll.Until(t, "f reconciled by the sweep after its failure", func() bool {
			return slices.Equal(r.reconciled(), []string{"f"})
		})
	})
}
