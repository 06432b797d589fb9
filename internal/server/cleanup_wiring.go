package server

import (
	"context"

	"github.com/stewardhq/steward/internal/lifecycle"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
)

// orderCleanups let the lifecycle show an order's owner what of it the
// SPRM's cleanup worker is still removing (the admins' queue stays theirs).
type orderCleanups struct{ sprm *sprm.Service }

func (c orderCleanups) OrderCleanups(ctx context.Context, orderID string) ([]lifecycle.Cleanup, error) {
	tasks, err := c.sprm.OrderCleanupTasks(ctx, orderID)
	if err != nil {
		return nil, err
	}
	out := make([]lifecycle.Cleanup, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, cleanupOf(t))
	}
	return out, nil
}

// cleanupLog has the lifecycle log each finished cleanup task of an
// order's instance on the order, in the transaction that ends the task.
type cleanupLog struct{ lifecycle *lifecycle.Service }

func (c cleanupLog) CleanupDoneTx(ctx context.Context, tx *store.Tx, task sprm.CleanupTask) error {
	return c.lifecycle.CleanupDoneTx(ctx, tx, task.OrderID, cleanupOf(task))
}

func cleanupOf(t sprm.CleanupTask) lifecycle.Cleanup {
	return lifecycle.Cleanup{TaskID: t.ID, InstanceID: t.InstanceID, ProviderName: t.ProviderName, Status: t.Status,
		RequestTime: t.RequestedAt}
}
