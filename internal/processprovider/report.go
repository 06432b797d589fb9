package processprovider

import (
	"context"
	"sync"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// outbox holds one instance's reports not yet sent, in order. A sender
// goroutine drains it while it is not empty and ends when it is, so an idle
// instance costs no goroutine.
type outbox struct {
	mu       sync.Mutex
	queue    []provider.StatusReport
	draining bool
}

// enqueue adds r to o and starts a sender if none is draining o. Callers are
// a supervisor, or Create, Update and Delete holding p.mu with the provider
// not stopped, so Stop never waits on senders while one can still be added.
func (p *Provider) enqueue(o *outbox, r provider.StatusReport) {
	o.mu.Lock()
	o.queue = append(o.queue, r)
	start := !o.draining
	o.draining = true
	o.mu.Unlock()
	if start {
		p.senders.Go(func() { p.drain(o) })
	}
}

// drain sends o's reports in order until it is empty.
func (p *Provider) drain(o *outbox) {
	for {
		o.mu.Lock()
		if len(o.queue) == 0 {
			o.draining = false
			o.mu.Unlock()
			return
		}
		r := o.queue[0]
		o.queue = o.queue[1:]
		o.mu.Unlock()
		p.send(o, r)
	}
}

// superseded reports whether a newer report waits in o. Steward ignores a
// report older than the last it applied, so retrying the older one is moot.
func (o *outbox) superseded() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.queue) > 0
}

// send tries r up to ReportAttempts times with doubling backoff, each try
// bounded by ReportTimeout, and logs the report as dropped if all fail. It
// gives up early when the provider stops or a newer report is queued.
func (p *Provider) send(o *outbox, r provider.StatusReport) {
	log := p.logger.With("instance_id", r.InstanceID, "status", string(r.Status))
	delay := p.cfg.ReportBackoff
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(p.runCtx, p.cfg.ReportTimeout)
		err := p.cfg.Reporter.Report(ctx, r)
		cancel()
		switch {
		case err == nil:
			return
		case p.runCtx.Err() != nil:
			log.Debug("status report abandoned: provider stopping", "error", err)
			return
		case o.superseded():
			log.Debug("status report superseded by a newer one", "error", err)
			return
		case attempt >= p.cfg.ReportAttempts:
			log.Error("status report dropped", "attempts", attempt, "error", err)
			return
		}
		log.Debug("status report failed; retrying", "attempt", attempt, "delay", delay, "error", err)
		timer := time.NewTimer(delay)
		select {
		case <-timer.C:
		case <-p.runCtx.Done():
			timer.Stop()
			log.Debug("status report abandoned: provider stopping", "error", err)
			return
		}
		delay *= 2
	}
}
