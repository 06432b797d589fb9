package processprovider

import (
	"context"
	"log/slog"
	"sync"
)

// latestBox holds the newest report of one stream that is not sent yet.
// Each runtime or repair report carries the whole state, so a newer one
// makes an older one worthless: a put replaces what waits, and a sender
// goroutine sends the newest, never an older after a newer. Like an
// outbox, an idle box costs no goroutine.
type latestBox struct {
	mu       sync.Mutex
	pending  func(context.Context) error
	draining bool
}

// put makes send the box's newest report and starts a sender if none is
// draining the box. Callers are supervisors, repair operations, or
// Create, Update and Repair holding p.mu with the provider not stopped, so
// Stop never waits on senders while one can still be added.
func (p *Provider) put(b *latestBox, what string, log *slog.Logger, send func(context.Context) error) {
	b.mu.Lock()
	b.pending = send
	start := !b.draining
	b.draining = true
	b.mu.Unlock()
	if start {
		p.senders.Go(func() { p.drainLatest(b, what, log) })
	}
}

// drainLatest sends the box's newest report until none waits.
func (p *Provider) drainLatest(b *latestBox, what string, log *slog.Logger) {
	for {
		b.mu.Lock()
		send := b.pending
		b.pending = nil
		if send == nil {
			b.draining = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		p.deliver(what, log, b.waiting, send)
	}
}

// waiting reports whether a newer report waits in b.
func (b *latestBox) waiting() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pending != nil
}
