// Package background runs a service's loop on a goroutine of its own until
// the service stops: the Start/Stop pair every periodic loop of Steward has
// (a goroutine, the cancel func of its context, a channel closed when it
// returns, and a Stop that cancels and waits no longer than its context).
// It is a leaf: it imports nothing of Steward.
package background

import (
	"context"
	"errors"
	"sync"
)

// ErrStarted answers Start on a Loop that runs already.
var ErrStarted = errors.New("background: already started")

// Loop is one background goroutine. The zero Loop is ready to Start; it is
// safe for concurrent use.
type Loop struct {
	mu     sync.Mutex
	cancel context.CancelFunc // nil when not running
	done   chan struct{}      // closed when the last run's fn has returned
}

// Start runs fn on a goroutine of its own and returns at once. fn's context
// has ctx's values but not its cancellation (a start context is usually
// bounded, a loop runs until Stop); Stop cancels it. Start on a running
// Loop runs nothing and returns [ErrStarted]; after Stop, Start runs fn
// anew.
func (l *Loop) Start(ctx context.Context, fn func(ctx context.Context)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel != nil {
		return ErrStarted
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	l.cancel, l.done = cancel, done
	go func() {
		defer close(done)
		fn(runCtx)
	}()
	return nil
}

// Stop cancels fn's context and waits until fn has returned, or returns
// ctx's error if ctx ends first (fn still ends on its own; a later Stop
// waits for it again). It is idempotent and safe before Start.
func (l *Loop) Stop(ctx context.Context) error {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.cancel = nil
	l.mu.Unlock()
	if done == nil {
		return nil
	}
	if cancel != nil {
		cancel()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
