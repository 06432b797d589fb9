package reconcile_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// jobLog records the jobs queued (whether their transaction commits or
// not).
type jobLog struct {
	mu     sync.Mutex
	orders []string
}

func (l *jobLog) InsertTx(_ context.Context, _ *store.Tx, args river.JobArgs, _ *river.InsertOpts) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.orders = append(l.orders, args.(reconcile.Args).OrderID)
	return nil
}

func (l *jobLog) queued() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.orders)
}

func request(t *testing.T, db *store.DB, q *reconcile.Queue, orderID string) {
	t.Helper()
	if err := db.InTx(t.Context(), func(tx *store.Tx) error { return q.RequestTx(t.Context(), tx, orderID) }); err != nil {
		t.Fatal(err)
	}
}

// A burst of requests for an order is one job until the worker takes the
// request; a request after the take is a job again, and a request whose job
// was given up is queued again by the requeue pass.
func TestQueue_OneJobPerOrderWhileTheRequestWaits(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		jobs := &jobLog{}
		q := reconcile.New(db, jobs)

		request(t, db, q, "a")
		request(t, db, q, "a")
		request(t, db, q, "b")
		request(t, db, q, "a")
		if got, want := jobs.queued(), []string{"a", "b"}; !slices.Equal(got, want) {
			t.Fatalf("jobs after a burst = %v, want %v", got, want)
		}

		// A request rolled back with its transaction leaves no request
		// behind: the next one queues a job again.
		_ = db.InTx(t.Context(), func(tx *store.Tx) error {
			if err := q.RequestTx(t.Context(), tx, "c"); err != nil {
				t.Fatal(err)
			}
			return context.Canceled
		})
		request(t, db, q, "c")
		if got, want := jobs.queued(), []string{"a", "b", "c", "c"}; !slices.Equal(got, want) {
			t.Fatalf("jobs after a rolled-back request = %v, want %v", got, want)
		}

		if err := db.InTx(t.Context(), func(tx *store.Tx) error { return q.TakeTx(t.Context(), tx, "a") }); err != nil {
			t.Fatal(err)
		}
		request(t, db, q, "a")
		if got, want := jobs.queued(), []string{"a", "b", "c", "c", "a"}; !slices.Equal(got, want) {
			t.Fatalf("jobs after the take = %v, want %v", got, want)
		}

		if n, err := q.Requeue(t.Context(), time.Hour); err != nil || n != 0 {
			t.Fatalf("requeue of requests younger than an hour = %d, %v; want 0", n, err)
		}
		if n, err := q.Requeue(t.Context(), -time.Second); err != nil || n != 3 {
			t.Fatalf("requeue of every waiting request = %d, %v; want 3 (a, b, c)", n, err)
		}
		got := jobs.queued()[5:]
		slices.Sort(got)
		if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
			t.Fatalf("requeued jobs = %v, want %v", got, want)
		}
	})
}
