package catalog

import (
	"context"
	"fmt"

	"github.com/stewardhq/steward/internal/statemachine"
)

// checkLifecycle returns nil when the lifecycle id is a built-in or a
// stored one ([Config.Lifecycles]), an error wrapping
// [ErrUnknownLifecycle] when it is neither.
func (s *Service) checkLifecycle(ctx context.Context, id string) error {
	for _, b := range statemachine.Builtins() {
		if b.ID == id {
			return nil
		}
	}
	stored := false
	if s.cfg.Lifecycles != nil {
		var err error
		if stored, err = s.cfg.Lifecycles.LifecycleStored(ctx, id); err != nil {
			return fmt.Errorf("look up lifecycle %q: %w", id, err)
		}
	}
	if !stored {
		return fmt.Errorf("lifecycle %q: %w", id, ErrUnknownLifecycle)
	}
	return nil
}
