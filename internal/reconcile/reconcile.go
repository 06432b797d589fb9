// Package reconcile is the queue of per-order reconciles (DESIGN §2, issue
// 23). Status flows one way: what changes below the lifecycle (an adapter's
// report on an order, an instance's status, an update's outcome, the end of
// a replacement) records only its own facts and, in the same transaction,
// asks for the order to be reconciled. The lifecycle works the request: it
// takes the order's rows, locks the order, reads down and fires the
// transfers. Nothing below the lifecycle calls up into it.
//
// A request is a row of order_changes, written in the transaction of the
// change it follows (a fact about the order's resource, or a bare request),
// so it is as durable as the change. Once that transaction commits, the
// order is handed to one of the queue's workers in this process, which runs
// the lifecycle's reconcile at once; while it waits for a worker, asking
// again hands out nothing more, so a burst of changes is one reconcile. The
// worker's transaction takes (deletes) the order's rows first, before it
// reads, and a change committed after that is handed out, and reconciled,
// again. A request no worker took (the process died between the commit and
// the reconcile, the hand-out was dropped under load, or the reconcile
// failed and rolled back) is found by a sweep every replica runs each
// second, for requests older than [SweepAfter], and at start for all.
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
	"slices"
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
	// handed holds the orders handed to the workers whose rows have not
	// been taken yet: asking again meanwhile hands out nothing more.
	mu     sync.Mutex
	handed map[string]struct{}
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
		handed: make(map[string]struct{}), sweepAfter: SweepAfter}
}

// RequestTx asks, in tx, for the order to be reconciled once tx commits,
// with no fact to act on (an adapter's report, a child removed: the
// reconcile reads them).
func (q *Queue) RequestTx(ctx context.Context, tx *store.Tx, orderID string) error {
	return q.RecordTx(ctx, tx, Change{OrderID: orderID, Kind: kindRequest})
}

// handOut gives the order to a worker unless it was handed out and its rows
// not taken yet; a full queue drops it for the sweep.
func (q *Queue) handOut(orderID string) {
	if !q.markHanded(orderID) {
		return
	}
	select {
	case q.wake <- orderID:
	default:
		q.unmarkHanded(orderID) // the sweep hands it out
	}
}

func (q *Queue) markHanded(orderID string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.handed[orderID]; ok {
		return false
	}
	q.handed[orderID] = struct{}{}
	return true
}

func (q *Queue) unmarkHanded(orderID string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.handed, orderID)
}

// TakeTx removes the order's waiting rows in tx and returns its changes in
// the order they were recorded (a bare request is none), for the reconcile
// in tx to act on: the worker's first step, before it reads anything. A
// change committed from here on is handed out again, so none is missed by
// the reconcile's reads. If tx rolls back the rows stay, for the sweep.
// For one instance the order of its changes is the order of its commits:
// each status change updates the instance's row, which serialises them.
func (q *Queue) TakeTx(ctx context.Context, tx *store.Tx, orderID string) ([]Change, error) {
	q.unmarkHanded(orderID)
	rows, err := q.q.ChangeTake(ctx, tx, orderID)
	if err != nil {
		return nil, fmt.Errorf("take reconcile of order %s: %w", orderID, err)
	}
	out := make([]Change, 0, len(rows))
	for _, r := range rows {
		if ChangeKind(r.Kind) == kindRequest {
			continue
		}
		out = append(out, Change{OrderID: orderID, Kind: ChangeKind(r.Kind), InstanceID: r.InstanceID, PreviousID: r.PreviousID,
			OperationID: r.OperationID, ProviderName: r.ProviderName, Status: r.Status, Message: r.Message, RestartCount: r.RestartCount,
			Via: r.Via, seq: r.Seq})
	}
	// RETURNING promises no order.
	slices.SortFunc(out, func(a, b Change) int { return cmp.Compare(a.seq, b.seq) })
	return out, nil
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
	left, err := q.q.ChangeListWaiting(ctx, q.db, q.now().UTC().Add(time.Nanosecond), sweepBatch)
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
			err := reconcile(ctx, id)
			// Its take unmarked the order already, unless the reconcile
			// failed before it: the order must not stay marked, or the
			// sweep would pass it by for good.
			q.unmarkHanded(id)
			if err != nil && ctx.Err() == nil {
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
	ids, err := q.q.ChangeListWaiting(ctx, q.db, now.Add(-olderThan), sweepBatch)
	if err != nil {
		return 0, fmt.Errorf("list waiting reconcile requests: %w", err)
	}
	return q.hand(ctx, now, ids)
}

// hand gives each order to a worker, renewing its request first (so
// another replica's sweep passes it by for a while), and returns how many.
// An order handed out and not taken yet is passed by.
func (q *Queue) hand(ctx context.Context, now time.Time, ids []string) (int, error) {
	for i, id := range ids {
		if _, err := q.q.ChangeRenew(ctx, q.db, now, id); err != nil {
			return i, fmt.Errorf("renew reconcile request of order %s: %w", id, err)
		}
		if !q.markHanded(id) {
			continue
		}
		select {
		case q.wake <- id:
		case <-ctx.Done():
			q.unmarkHanded(id)
			return i, ctx.Err()
		}
	}
	return len(ids), nil
}
