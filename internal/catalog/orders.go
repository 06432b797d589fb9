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
	var n int
	err := tx.QueryRow(ctx, s.q.Get("CatalogItemLiveOrders"), itemID).Scan(&n)
	return n, err
}

// liveOrdersOfTypeTx counts the live orders of a service type, in tx.
func (s *Service) liveOrdersOfTypeTx(ctx context.Context, tx *store.Tx, serviceType string) (int, error) {
	var n int
	err := tx.QueryRow(ctx, s.q.Get("ServiceTypeLiveOrders"), serviceType).Scan(&n)
	return n, err
}

// liveAttributeSetsTx returns the attribute sets (candidate, active,
// rollback, requested; nil ones left out) of every live order of a service
// type, by order id, in tx.
func (s *Service) liveAttributeSetsTx(ctx context.Context, tx *store.Tx, serviceType string) (map[string][]map[string]any, error) {
	rows, err := tx.Query(ctx, s.q.Get("ServiceTypeLiveAttributes"), serviceType)
	if err != nil {
		return nil, err
	}
	type row struct {
		id   string
		sets statemachine.Attributes
	}
	all, err := store.Collect(rows, func(r store.Scanner) (row, error) {
		var x row
		var raw []byte
		if err := r.Scan(&x.id, &raw); err != nil {
			return x, err
		}
		return x, json.Unmarshal(raw, &x.sets)
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string][]map[string]any, len(all))
	for _, x := range all {
		for _, set := range []map[string]any{x.sets.Candidate, x.sets.Active, x.sets.Rollback, x.sets.Requested} {
			if set != nil {
				out[x.id] = append(out[x.id], set)
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
	var n int
	if err := s.cfg.DB.QueryRow(ctx, s.q.Get("LifecycleExists"), id).Scan(&n); err != nil {
		return fmt.Errorf("look up lifecycle %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("lifecycle %q: %w", id, ErrUnknownLifecycle)
	}
	return nil
}
