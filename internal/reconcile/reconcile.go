// Package reconcile is the queue of per-order reconciles (DESIGN §2, issue
// 23). Status flows one way: what changes below the lifecycle (an adapter's
// report on an order, later an instance's status and the end of a
// replacement) records only its own facts and, in the same transaction,
// asks for the order to be reconciled. The lifecycle works the request: it
// locks the order, reads down and fires the transfers. Nothing below the
// lifecycle calls up into it.
//
// A request is unique per order while it waits: asking again for an order
// whose request has not been taken adds no job, so a burst of reports is
// one reconcile. River's unique jobs cannot say that: a unique job also
// blocks a new one while it runs, and a change committed after the running
// reconcile read would then be missed. So a request is a row of
// order_reconciles plus a plain job; the worker deletes the row first in
// its transaction, before it reads, and a change committed after that asks,
// and is reconciled, again.
package reconcile

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/store"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// Args is the job that reconciles one order.
type Args struct {
	OrderID string `json:"order_id"`
}

// Kind names the job.
func (Args) Kind() string { return "order.reconcile" }

// jobInserter queues a job in the caller's transaction (jobs.Client).
type jobInserter interface {
	InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) error
}

// Queue asks for and hands out order reconciles. It is safe for concurrent
// use.
type Queue struct {
	db   *store.DB
	jobs jobInserter
	q    *queries
	now  func() time.Time
}

// New returns a Queue that queues its jobs through jobs.
func New(db *store.DB, jobs jobInserter) *Queue {
	return &Queue{db: db, jobs: jobs, q: newQueries(db.Engine()), now: time.Now}
}

// RequestTx asks, in tx, for the order to be reconciled once tx commits.
func (q *Queue) RequestTx(ctx context.Context, tx *store.Tx, orderID string) error {
	requests, err := q.q.ReconcileRequest(ctx, tx, orderID, q.now().UTC())
	if err != nil {
		return fmt.Errorf("request reconcile of order %s: %w", orderID, err)
	}
	if requests > 1 {
		return nil // a job is queued and has not taken the request yet
	}
	return q.jobs.InsertTx(ctx, tx, Args{OrderID: orderID}, nil)
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

// requeueBatch bounds the requests one requeue pass renews.
const requeueBatch = 500

// GivenUpAfter is how long a request waits before [Queue.RequeueGivenUp]
// takes its job for given up. A queue that deep is far behind anyway, and
// a second job for an order is harmless: a reconcile is idempotent.
const GivenUpAfter = 5 * time.Minute

// RequeueGivenUp queues a job again for every request that has waited
// longer than [GivenUpAfter], and returns how many. A request outlives its
// job only when the job was given up (its retries exhausted, or discarded
// by hand): the request then stays and asks no more, so this is the resync
// of last resort for them.
func (q *Queue) RequeueGivenUp(ctx context.Context) (int, error) {
	return q.requeue(ctx, GivenUpAfter)
}

func (q *Queue) requeue(ctx context.Context, olderThan time.Duration) (int, error) {
	now := q.now().UTC()
	ids, err := q.q.ReconcileListWaiting(ctx, q.db, now.Add(-olderThan), requeueBatch)
	if err != nil {
		return 0, fmt.Errorf("list waiting reconcile requests: %w", err)
	}
	for _, id := range ids {
		err := q.db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := q.q.ReconcileRenew(ctx, tx, now, id); err != nil {
				return err
			}
			return q.jobs.InsertTx(ctx, tx, Args{OrderID: id}, nil)
		})
		if err != nil {
			return 0, fmt.Errorf("requeue reconcile of order %s: %w", id, err)
		}
	}
	return len(ids), nil
}
