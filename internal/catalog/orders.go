package catalog

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/store"
)

// The catalog asks about the orders made from it and the lifecycles its
// types name by its own read-only queries (sql/*/orders.sql): their owner,
// the lifecycle, sits above it and is never called back (DESIGN §2).

// liveOrdersOfItemTx counts the live orders of an item, in tx. A delete of
// the item holds the item's row lock (FOR UPDATE on PostgreSQL) while it
// asks, so an order create that reads the item with [Service.ItemTx] in its
// own transaction either commits first (and is counted) or waits and then
// finds the item gone.
func (s *Service) liveOrdersOfItemTx(ctx context.Context, tx *store.Tx, itemID string) (int, error) {
	n, err := s.q.CatalogItemLiveOrders(ctx, tx, itemID)
	return int(n), err
}

// liveOrdersOfTypeTx counts the live orders of a service type, in tx.
func (s *Service) liveOrdersOfTypeTx(ctx context.Context, tx *store.Tx, serviceType string) (int, error) {
	n, err := s.q.ServiceTypeLiveOrders(ctx, tx, serviceType)
	return int(n), err
}

// liveAttributeSetsTx returns the attribute sets (candidate, active,
// rollback, requested; nil ones left out) of every live order of a service
// type, by order id, in tx.
func (s *Service) liveAttributeSetsTx(ctx context.Context, tx *store.Tx, serviceType string) (map[string][]map[string]any, error) {
	rows, err := s.q.ServiceTypeLiveAttributes(ctx, tx, serviceType)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]map[string]any, len(rows))
	for _, row := range rows {
		var sets statemachine.Attributes
		if err := json.Unmarshal(row.Attributes, &sets); err != nil {
			return nil, fmt.Errorf("attributes of order %s: %w", row.ID, err)
		}
		for _, set := range []map[string]any{sets.Candidate, sets.Active, sets.Rollback, sets.Requested} {
			if set != nil {
				out[row.ID] = append(out[row.ID], set)
			}
		}
	}
	return out, nil
}

// checkLifecycle returns nil when the lifecycle id is a built-in or a
// stored one, an error wrapping [ErrUnknownLifecycle] when it is neither.
func (s *Service) checkLifecycle(ctx context.Context, id string) error {
	for _, b := range statemachine.Builtins() {
		if b.ID == id {
			return nil
		}
	}
	n, err := s.q.LifecycleExists(ctx, s.cfg.DB, id)
	if err != nil {
		return fmt.Errorf("look up lifecycle %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("lifecycle %q: %w", id, ErrUnknownLifecycle)
	}
	return nil
}
