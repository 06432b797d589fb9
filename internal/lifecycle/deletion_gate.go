package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/adapterstatus"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/status"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// adapterReports is what the deletion gate and the Ready aggregation read of
// the adapters' reports.
type adapterReports interface {
	AllTx(ctx context.Context, tx *store.Tx, orderID string) ([]adapterstatus.Report, error)
	All(ctx context.Context, orderID string) ([]adapterstatus.Report, error)
}

// deletionHoldPrefix starts last_error while a deletion waits at the gate:
// the Ready condition's message says what it waits for.
const deletionHoldPrefix = "deletion waits for "

// deletionGateTx says what a deleting order's removal still waits for,
// "" when nothing (its resource is gone: the caller knows). It reads what
// the gate rule ([status.DeletionGate]) needs: the adapters' reports, the
// service type's required adapters and whether a child order remains.
func (s *Service) deletionGateTx(ctx context.Context, tx *store.Tx, o *Order) (string, error) {
	var adapters status.Adapters
	if s.cfg.Adapters != nil {
		reports, err := s.cfg.Adapters.AllTx(ctx, tx, o.ID)
		if err != nil {
			return "", err
		}
		st, _, err := s.serviceType(ctx, o.ServiceType)
		if err != nil {
			return "", err
		}
		adapters = status.Adapters{Required: st.RequiredAdapters, Reports: statusReports(reports)}
	}
	children, err := s.q.OrderCountChildrenLeft(ctx, tx, o.ID)
	if err != nil {
		return "", fmt.Errorf("count children of %s: %w", o.ID, err)
	}
	return status.DeletionGate(statusOrder(o, statemachine.State{}), adapters, children > 0), nil
}

// finishDeletionTx takes the resource transfer out of purging state st of
// deleting order o, whose resource is gone, once the deletion gate is
// open; else it records in last_error what the gate waits for. An order
// that is not being deleted (a lifecycle that purges resources without a
// delete) has no gate.
func (s *Service) finishDeletionTx(ctx context.Context, tx *store.Tx, o *Order, def statemachine.Definition,
	st statemachine.State, depth int) error {
	tr, ok := def.Transfer(st.Name, statemachine.TriggerResource)
	if !ok {
		return nil
	}
	if o.DeletedAt != nil {
		hold, err := s.deletionGateTx(ctx, tx, o)
		if err != nil {
			return err
		}
		if hold != "" {
			o.LastError = deletionHoldPrefix + hold
			return nil
		}
	}
	return s.fireTx(ctx, tx, o, def, step{transfer: tr, trigger: statemachine.TriggerResource}, depth)
}

// recheckDeletionTx finishes the deletion of an order that waits at the
// gate, when the gate has opened; it does nothing for any other order.
func (s *Service) recheckDeletionTx(ctx context.Context, tx *store.Tx, orderID string) error {
	o, err := s.lockOrderTx(ctx, tx, orderID)
	if errors.Is(err, ErrOrderNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.DeletedAt == nil || o.Terminal || (o.InstanceID != "" && o.Status != provider.StatusDeleted) {
		return nil
	}
	def, err := s.definition(ctx, tx, o.Lifecycle)
	if err != nil {
		return err
	}
	st, _ := def.State(o.State)
	if !st.PurgeResources {
		return nil
	}
	read, lastError := o.Version, o.LastError
	if err := s.finishDeletionTx(ctx, tx, &o, def, st, 0); err != nil {
		return err
	}
	if o.Version == read && o.LastError == lastError {
		return nil
	}
	return s.saveOrderTx(ctx, tx, &o, read)
}

// queueParentRecheckTx asks for a reconcile of o's parent (which checks its
// deletion gate) when o, being removed now, is the parent's last child not
// yet removed: only then can the gate open (a job per child would make a parent of 1,000
// children check its gate 1,000 times). The parent's row is locked first,
// so two last children removed at once (PostgreSQL) are counted one after
// the other and the second sees the first gone.
func (s *Service) queueParentRecheckTx(ctx context.Context, tx *store.Tx, o *Order) error {
	if o.ParentID == nil || *o.ParentID == "" {
		return nil
	}
	_, err := s.q.OrderLockParent(ctx, tx, *o.ParentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lock parent %s of %s: %w", *o.ParentID, o.ID, err)
	}
	left, err := s.q.OrderCountSiblingsLeft(ctx, tx, *o.ParentID, o.ID)
	if err != nil {
		return fmt.Errorf("count siblings of %s: %w", o.ID, err)
	}
	if left > 0 {
		return nil
	}
	return s.cfg.Reconciles.RequestTx(ctx, tx, *o.ParentID)
}

// deletionSweepBatch bounds the orders one sweep checks.
const deletionSweepBatch = 500

// SweepDeletions checks again the deletion gate of every order that waits
// at it (periodically: the in-transaction checks on each report and each
// child's removal are the fast path; this catches what they could not, such
// as a gate that failed to be checked). It returns how many orders it
// removed.
func (s *Service) SweepDeletions(ctx context.Context) (int, error) {
	ids, err := s.q.OrderListWaitingDeletion(ctx, s.cfg.DB, deletionSweepBatch)
	if err != nil {
		return 0, fmt.Errorf("list orders waiting for deletion: %w", err)
	}
	removed := 0
	for _, id := range ids {
		err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
			if err := s.recheckDeletionTx(ctx, tx, id); err != nil {
				return err
			}
			o, err := s.lockOrderTx(ctx, tx, id)
			if err == nil && o.Terminal {
				removed++
			}
			return err
		})
		if err != nil {
			return removed, err
		}
	}
	return removed, nil
}
