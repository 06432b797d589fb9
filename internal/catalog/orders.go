package catalog

import (
	"context"
	"fmt"

	"github.com/stewardhq/steward/internal/statemachine"
)

// The catalog asks about the orders made from it through internal/order,
// and about the lifecycles its types name by its own read-only query
// (sql/*/orders.sql): their owner, the lifecycle, sits above it and is
// never called back (DESIGN §2).

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
