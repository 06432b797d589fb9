package lifecycle

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/store"
)

// reconciles is the queue of per-order reconciles (*reconcile.Queue): what
// changes below the lifecycle asks there, and the engine works the requests
// here, reading down (DESIGN §2).
type reconciles interface {
	RequestTx(ctx context.Context, tx *store.Tx, orderID string) error
	TakeTx(ctx context.Context, tx *store.Tx, orderID string) ([]reconcile.Change, error)
}

// reconcileTx brings an order up to date with what happened below it: the
// changes of its resource recorded since the last reconcile, in the order
// they were recorded (its instance's status, an update's outcome, a
// replacement done or failed), each firing what it means for the order's
// state; then a deleting order whose resource is gone is removed once its
// deletion gate opens (the adapters' reports, its children).
func (s *Service) reconcileTx(ctx context.Context, tx *store.Tx, orderID string) error {
	// The request goes first: a change committed from here on asks again,
	// so none is missed by the reads below.
	changes, err := s.cfg.Reconciles.TakeTx(ctx, tx, orderID)
	if err != nil {
		return err
	}
	var seen orderSeen
	for _, c := range changes {
		if seen, err = s.applyChangeTx(ctx, tx, c); err != nil {
			return fmt.Errorf("apply %s change of order %s: %w", c.Kind, orderID, err)
		}
	}
	// Most reconciles follow a live order's status: what the last change's
	// applier saw of the order, or else a count, not a read of the whole
	// order, says whether there is a gate to check.
	if !seen.read {
		deleting, err := s.q.OrderAwaitsRemoval(ctx, tx, orderID)
		if err != nil {
			return err
		}
		seen.awaitsRemoval = deleting > 0
	}
	if !seen.awaitsRemoval {
		return nil
	}
	return s.recheckDeletionTx(ctx, tx, orderID)
}

// reconcileWorker works the order.reconcile jobs an earlier version
// queued (reconcile.Args).
type reconcileWorker struct {
	river.WorkerDefaults[reconcile.Args]
	s *Service
}

func (w *reconcileWorker) Work(ctx context.Context, job *river.Job[reconcile.Args]) error {
	return w.s.Reconcile(ctx, job.Args.OrderID)
}

// Reconcile reconciles one order (a reconcile.Reconciler: the queue's
// workers run it when a request is committed, and its sweep for requests
// left waiting).
func (s *Service) Reconcile(ctx context.Context, orderID string) error {
	return s.cfg.DB.InTx(ctx, func(tx *store.Tx) error { return s.reconcileTx(ctx, tx, orderID) })
}

// deletionGateArgs is the job an earlier version queued to check a
// parent's deletion gate; its worker stays so that jobs queued before an
// upgrade still run, as a reconcile.
type deletionGateArgs struct {
	OrderID string `json:"order_id"`
}

func (deletionGateArgs) Kind() string { return "lifecycle.deletion_gate" }

type deletionGateWorker struct {
	river.WorkerDefaults[deletionGateArgs]
	s *Service
}

func (w *deletionGateWorker) Work(ctx context.Context, job *river.Job[deletionGateArgs]) error {
	return w.s.Reconcile(ctx, job.Args.OrderID)
}
