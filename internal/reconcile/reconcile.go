// Package reconcile is the queue of per-order reconciles (DESIGN §2, issue
// 23). Status flows one way: what changes below the lifecycle (an adapter's
// report on an order, an instance's status, an update's outcome, the end of
// a replacement) records only its own facts and, in the same transaction,
// asks for the order to be reconciled. The lifecycle works the request: it
// locks the order, reads down and fires the transfers. Nothing below the
// lifecycle calls up into it.
//
// A request is a row of order_reconciles, written in the transaction of
// the change it follows, so it is as durable as the change. Once that
// transaction commits, the first request of an order (none waiting) wakes
// one of the queue's workers in this process, which runs the lifecycle's
// reconcile at once; asking again while the request waits adds nothing, so
// a burst of changes is one reconcile. The worker's transaction deletes the
// row first, before it reads, and a change committed after that asks, and
// is reconciled, again. A request no worker took (the process died between
// the commit and the reconcile, the wake-up was dropped under load, or the
// reconcile failed and rolled back) is found by a sweep every replica runs
// each second, for requests older than [SweepAfter], and at start for all.
//
// No River job per request: a job's insert, fetch and completion cost more
// than the reconcile itself, and on SQLite a transactional insert waits for
// River's next poll (50ms).
package reconcile

import (
	"cmp"
	"context"
	"embed"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/background"
	"github.com/stewardhq/steward/internal/store"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// Args is the River job an earlier version queued to reconcile one order;
// the lifecycle keeps its worker so that jobs queued before an upgrade
// still run.
type Args struct {
	OrderID string `json:"order_id"`
}

// Kind names the job.
func (Args) Kind() string { return "order.reconcile" }

// Reconciler reconciles one order: the lifecycle, whose reconcile takes
// the order's request ([Queue.TakeTx]) first in its transaction.
type Reconciler func(ctx context.Context, orderID string) error

// Queue asks for and hands out order reconciles. It is safe for concurrent
// use.
type Queue struct {
	db   *store.DB
	q    *queries
	now  func() time.Time
	log  *slog.Logger
	wake chan string
	loop background.Loop
	// sweepAfter is SweepAfter; tests that hold a reconcile on purpose
	// lengthen it.
	sweepAfter time.Duration
}

// wakeBuffer bounds the wake-ups waiting for a worker; one that does not
// fit is dropped and its request left to the sweep.
const wakeBuffer = 4096

// New returns a Queue.
func New(db *store.DB, logger *slog.Logger) *Queue {
	return &Queue{db: db, q: newQueries(db.Engine()), now: time.Now,
		log: cmp.Or(logger, slog.New(slog.DiscardHandler)), wake: make(chan string, wakeBuffer),
		sweepAfter: SweepAfter}
}

// RequestTx asks, in tx, for the order to be reconciled once tx commits.
func (q *Queue) RequestTx(ctx context.Context, tx *store.Tx, orderID string) error {
	requests, err := q.q.ReconcileRequest(ctx, tx, orderID, q.now().UTC())
	if err != nil {
		return fmt.Errorf("request reconcile of order %s: %w", orderID, err)
	}
	if requests == 1 { // else a worker has been woken and not taken it yet
		tx.AfterCommit(func() {
			select {
			case q.wake <- orderID:
			default: // the sweep takes it
			}
		})
	}
	return nil
}

// TakeTx removes the order's waiting request in tx, the worker's first
// step, before it reads anything: on PostgreSQL the delete waits for a
// RequestTx that updated the row and has not committed yet, and the reads
// that follow (each statement's own snapshot) then see what it wrote; a
// change committed after the delete asks again. If tx rolls back, the
// request stays for the job's retry.
func (q *Queue) TakeTx(ctx context.Context, tx *store.Tx, orderID string) error {
	if _, err := q.q.ReconcileTake(ctx, tx, orderID); err != nil {
		return fmt.Errorf("take reconcile request of order %s: %w", orderID, err)
	}
	return nil
}

// SweepAfter is how long a request waits before the sweep of every replica
// takes it; the worker woken by its commit takes it well before.
const SweepAfter = 5 * time.Second

// sweepEvery is the time between two sweeps.
const sweepEvery = time.Second

// sweepBatch bounds the requests one sweep hands out.
const sweepBatch = 500

// Start runs workers goroutines that reconcile the orders whose requests
// this process committed, and the sweep. Its first pass takes every request
// waiting when Start is called (what a process that died left), listed
// before Start returns, so that a request committed afterwards is its own
// worker's alone. Stop ends them.
func (q *Queue) Start(ctx context.Context, workers int, reconcile Reconciler) error {
	left, err := q.q.ReconcileListWaiting(ctx, q.db, q.now().UTC().Add(time.Nanosecond), sweepBatch)
	if err != nil {
		return fmt.Errorf("list reconcile requests left waiting: %w", err)
	}
	return q.loop.Start(ctx, func(ctx context.Context) {
		var wg sync.WaitGroup
		for range max(workers, 1) {
			wg.Go(func() { q.work(ctx, reconcile) })
		}
		if _, err := q.hand(ctx, q.now().UTC(), left); err != nil && ctx.Err() == nil {
			q.log.WarnContext(ctx, "hand out reconcile requests left waiting", "error", err)
		}
		q.sweepLoop(ctx)
		wg.Wait()
	})
}

// Stop stops the workers and the sweep, and waits for the reconciles under
// way (or for ctx). A request not reconciled yet stays for the next sweep.
func (q *Queue) Stop(ctx context.Context) error { return q.loop.Stop(ctx) }

func (q *Queue) work(ctx context.Context, reconcile Reconciler) {
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-q.wake:
			if err := reconcile(ctx, id); err != nil && ctx.Err() == nil {
				// Rolled back: the request stays, and the sweep tries again.
				q.log.ErrorContext(ctx, "reconcile order; the sweep retries it", "order_id", id, "error", err)
			}
		}
	}
}

func (q *Queue) sweepLoop(ctx context.Context) {
	tick := time.NewTicker(sweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := q.sweep(ctx, q.sweepAfter)
		if err != nil && ctx.Err() == nil {
			q.log.WarnContext(ctx, "sweep of waiting reconciles", "error", err)
		}
		if n > 0 {
			q.log.InfoContext(ctx, "reconciles taken by the sweep", "orders", n)
		}
	}
}

// sweep hands every request older than olderThan to the workers and
// returns how many.
func (q *Queue) sweep(ctx context.Context, olderThan time.Duration) (int, error) {
	now := q.now().UTC()
	ids, err := q.q.ReconcileListWaiting(ctx, q.db, now.Add(-olderThan), sweepBatch)
	if err != nil {
		return 0, fmt.Errorf("list waiting reconcile requests: %w", err)
	}
	return q.hand(ctx, now, ids)
}

// hand gives each request to a worker, renewing it first (so another
// replica's sweep passes it by for a while), and returns how many.
func (q *Queue) hand(ctx context.Context, now time.Time, ids []string) (int, error) {
	for i, id := range ids {
		if _, err := q.q.ReconcileRenew(ctx, q.db, now, id); err != nil {
			return i, fmt.Errorf("renew reconcile request of order %s: %w", id, err)
		}
		select {
		case q.wake <- id:
		case <-ctx.Done():
			return i, ctx.Err()
		}
	}
	return len(ids), nil
}
