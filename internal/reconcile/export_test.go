package reconcile

import (
	"context"
	"time"
)

// Requeue is requeue for tests, which cannot wait GivenUpAfter.
func (q *Queue) Requeue(ctx context.Context, olderThan time.Duration) (int, error) {
	return q.requeue(ctx, olderThan)
}
