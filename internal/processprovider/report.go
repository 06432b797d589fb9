package processprovider

import (
	"context"
	"log/slog"
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

// send delivers r (see deliver).
func (p *Provider) send(o *outbox, r provider.StatusReport) {
	log := p.logger.With("instance_id", r.InstanceID, "status", string(r.Status))
	p.deliver("status report", log, o.superseded, func(ctx context.Context) error {
		return p.cfg.Reporter.Report(ctx, r)
	})
}

// deliver tries attempt, one report's sending, with doubling backoff up to
// ReportBackoffMax, each try bounded by ReportTimeout, until it succeeds:
// a report is never dropped because Steward is away. It gives up when
// Steward refuses the report for good ([provider.Refused], logged), when
// superseded says a newer report of the same stream waits, when the
// provider stops sending (Stop's flush ended), or after ReportAttempts
// tries when that is set. what names the report in logs.
func (p *Provider) deliver(what string, log *slog.Logger, superseded func() bool, attempt func(context.Context) error) {
	delay := p.cfg.ReportBackoff
	for n := 1; ; n++ {
		ctx, cancel := context.WithTimeout(p.runCtx, p.cfg.ReportTimeout)
		err := attempt(ctx)
		cancel()
		switch {
		case err == nil:
			return
		case p.runCtx.Err() != nil:
			log.Warn(what+" abandoned: provider stopped before Steward took it", "error", err)
			return
		case superseded():
			log.Debug(what+" superseded by a newer one", "error", err)
			return
		case provider.Refused(err):
			log.Error(what+" refused by Steward; not retried", "error", err)
			return
		case p.cfg.ReportAttempts > 0 && n >= p.cfg.ReportAttempts:
			log.Error(what+" dropped", "attempts", n, "error", err)
			return
		}
		log.Warn(what+" failed; retrying", "attempt", n, "delay", delay, "error", err)
		timer := time.NewTimer(delay)
		select {
		case <-timer.C:
		case <-p.runCtx.Done():
			timer.Stop()
			log.Warn(what+" abandoned: provider stopped before Steward took it", "error", err)
			return
		}
		delay = min(delay*2, p.cfg.ReportBackoffMax)
	}
}
