package placement

import (
	"context"
	"fmt"

	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// changeRecorder records, in the caller's transaction, what became of an
// order's resource, for the order's reconcile (*reconcile.Queue). Placement
// records its own facts there and calls nobody above it: status flows one
// way (DESIGN §2).
type changeRecorder interface {
	RecordTx(ctx context.Context, tx *store.Tx, c reconcile.Change) error
}

// recordTx records c, when an order's reconciles are wired.
func (s *Service) recordTx(ctx context.Context, tx *store.Tx, c reconcile.Change) error {
	if s.cfg.Changes == nil {
		return nil
	}
	return s.cfg.Changes.RecordTx(ctx, tx, c)
}

// decideTx records what placement itself decided about a resource (FAILED:
// its create was given up; DELETED: nothing is left to delete), which
// outranks its instance's status, and records the change for its order.
func (s *Service) decideTx(ctx context.Context, tx *store.Tx, instanceID string, status provider.Status, message string) error {
	t := s.now()
	n, err := s.q.ResourceSetOutcome(ctx, tx, ResourceSetOutcomeParams{Outcome: string(status), OutcomeMessage: message,
		UpdateTime: t, InstanceID: instanceID})
	if err != nil {
		return fmt.Errorf("record outcome of resource %s: %w", instanceID, err)
	}
	if n == 0 {
		return nil // not a resource: an instance created directly through the SPRM
	}
	orderID, err := s.orderOf(ctx, tx, instanceID)
	if err != nil {
		return err
	}
	return s.recordTx(ctx, tx, reconcile.Change{OrderID: orderID, Kind: reconcile.KindStatus, InstanceID: instanceID,
		Status: string(status), Message: message})
}

// fail marks a resource FAILED, for its order, in one transaction.
func (s *Service) fail(ctx context.Context, instanceID, message string) error {
	return s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		return s.decideTx(ctx, tx, instanceID, provider.StatusFailed, message)
	})
}

// deleted marks a resource DELETED, for its order, in one transaction.
func (s *Service) deleted(ctx context.Context, instanceID string) error {
	return s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		return s.decideTx(ctx, tx, instanceID, provider.StatusDeleted, "")
	})
}

// orderOf returns the order a resource realises, read in tx.
func (s *Service) orderOf(ctx context.Context, tx *store.Tx, instanceID string) (string, error) {
	orderID, err := s.q.ResourceOrderID(ctx, tx, instanceID)
	if err != nil {
		return "", fmt.Errorf("read order of resource %s: %w", instanceID, err)
	}
	return orderID, nil
}
