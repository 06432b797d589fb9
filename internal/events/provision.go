package events

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// provisionAttempt bounds one request that creates or updates a stream or
// a consumer; provision tries again while its caller's ctx lasts.
const provisionAttempt = 2 * time.Second

// provision runs create (a CreateOrUpdate of a stream or consumer) until
// it answers. On a NATS cluster, servers that create the same stream or
// durable consumer at once (replicas starting together, as a Deployment's
// first rollout does) are answered only the first of them; the others get
// no answer at all, although the stream now exists (nats-server#3677). So
// an attempt that gets none is tried again, after a short random pause, and
// then finds the stream and updates it. Any other error is returned at once.
func (b *Bus) provision(ctx context.Context, what string, create func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, provisionAttempt)
		err := create(actx)
		cancel()
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return err
		}
		b.logger.Info("no answer from NATS; trying again", "what", what, "attempt", attempt)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (after %d attempts)", err, attempt)
		case <-time.After(rand.N(200*time.Millisecond) + 50*time.Millisecond):
		}
	}
}
