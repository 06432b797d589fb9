package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/store"
)

// RehydrateOrder triggers the rehydration of an order (rehydration seed,
// "Rehydration Trigger"): the spec is NOT rebuilt from the catalog item; a
// new instance id is generated and placement rehydrates the order's
// current resource into it, from the original intent. The order is
// repointed at the new instance once its create was accepted
// ([Service.RepointOrderTx]). It returns the running operation.
func (s *Service) RehydrateOrder(ctx context.Context, project, id string) (operations.Operation, error) {
	if s.cfg.Placement == nil {
		return operations.Operation{}, errors.New("catalog: orders are not wired to placement")
	}
	o, err := s.Order(ctx, project, id, false)
	if err != nil {
		return operations.Operation{}, err
	}
	return s.cfg.Placement.Rehydrate(ctx, placement.RehydrateParams{
		Project: project, InstanceID: o.InstanceID, NewInstanceID: uuid.NewString(),
		Target: "catalog-item-instances/" + o.ID,
	})
}

// RepointOrderTx moves the order to its rehydrated resource in tx: the
// instance id, provider, active attributes and status become the new
// resource's, and the state follows. It implements placement.OrderRepointer;
// an order deleted, or no longer on the old instance, is placement.ErrOrderGone.
func (s *Service) RepointOrderTx(ctx context.Context, tx *store.Tx, r placement.Repoint) error {
	o, err := scanOrder(tx.QueryRow(ctx, s.q.Get("OrderGetByInstance"), r.OldInstanceID))
	if errors.Is(err, ErrOrderNotFound) {
		return fmt.Errorf("%w: order %s", placement.ErrOrderGone, r.OrderID)
	}
	if err != nil {
		return err
	}
	if o.ID != r.OrderID || o.DeletedAt != nil {
		return fmt.Errorf("%w: order %s", placement.ErrOrderGone, r.OrderID)
	}
	attrs := o.Attributes
	attrs.Active = r.Spec
	state := s.lifecycle.StateFor(o.State, r.Status, false)
	n, err := tx.Exec(ctx, s.q.Get("OrderRepoint"), r.NewInstanceID, r.ProviderName, store.JSON(attrs), string(r.Status),
		r.Message, state, s.now(), o.ID, r.OldInstanceID, o.Version)
	if err != nil {
		return fmt.Errorf("repoint order %s: %w", o.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("repoint order %s: %w", o.ID, store.ErrStale)
	}
	s.log.InfoContext(ctx, "order repointed", "order_id", o.ID, "old_instance_id", r.OldInstanceID,
		"new_instance_id", r.NewInstanceID, "provider", r.ProviderName)
	return nil
}
