package placement

import (
	"context"
	"fmt"

	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// InstanceStatusChangedTx records an instance's new status on its resource
// and passes it on to Config.Orders, in tx (the SPRM's transaction; it
// makes *Service a sprm.StatusObserver). An instance that has no resource
// (created directly through the SPRM's API) is ignored.
func (s *Service) InstanceStatusChangedTx(ctx context.Context, tx *store.Tx, st sprm.InstanceStatus) error {
	t := s.now()
	n, err := tx.Exec(ctx, s.q.Get("ResourceSetStatus"), string(st.Status), st.Message, t, string(st.Status), t, st.InstanceID)
	if err != nil {
		return fmt.Errorf("record status of resource %s: %w", st.InstanceID, err)
	}
	if n == 0 || s.cfg.Orders == nil {
		return nil
	}
	orderID, err := s.orderOf(ctx, tx, st.InstanceID)
	if err != nil {
		return err
	}
	return s.cfg.Orders.ResourceStatusTx(ctx, tx, ResourceStatus{OrderID: orderID, InstanceID: st.InstanceID,
		Status: st.Status, Message: st.Message, RestartCount: st.RestartCount, Via: st.Via})
}

// fail marks a resource FAILED, with the order, in one transaction.
func (s *Service) fail(ctx context.Context, instanceID, message string) error {
	return s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		return s.InstanceStatusChangedTx(ctx, tx, sprm.InstanceStatus{
			InstanceID: instanceID, Status: provider.StatusFailed, Message: message,
		})
	})
}

// deleted marks a resource DELETED, with the order, in one transaction.
func (s *Service) deleted(ctx context.Context, instanceID string) error {
	return s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		return s.InstanceStatusChangedTx(ctx, tx, sprm.InstanceStatus{InstanceID: instanceID, Status: provider.StatusDeleted})
	})
}
