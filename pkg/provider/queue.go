package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// ErrQueueClosed is returned by [ReportQueue.Report] after Close.
var ErrQueueClosed = errors.New("provider: report queue closed")

// ReportQueueConfig configures a [ReportQueue].
type ReportQueueConfig struct {
	// Reporter delivers each report, such as an [HTTPReporter] or a
	// [NATSReporter]. Required.
	Reporter StatusReporter
	// Retry says how long to wait between attempts: from Initial (200ms)
	// to Max (30s) by default. MaxAttempts is ignored: a report is tried
	// until it is delivered, refused ([Refused]), superseded or abandoned
	// by Close.
	Retry RetryPolicy
	// AttemptTimeout bounds each attempt (a call of Reporter.Report, with
	// whatever retries the reporter makes itself). Defaults to 30s.
	AttemptTimeout time.Duration
	// Logger hears about refused and abandoned reports (Error) and failed
	// attempts (Warn). Defaults to discarding.
	Logger *slog.Logger
}

// ReportQueue delivers status reports without losing them while Steward
// is away: Report hands a report over and returns at once, and the queue
// keeps the latest report of each instance until it is delivered, retrying
// with backoff for as long as it takes. A newer report of an instance
// replaces an older one not yet delivered (and stops an attempt of it in
// flight): each report carries the instance's whole status, and Steward
// ignores one older than what it applied. A report is given up only when
// Steward refuses it for good ([Refused]), which is logged. Close delivers
// what it can within its ctx. It is a [StatusReporter]; build it with
// [NewReportQueue]. It is safe for concurrent use.
type ReportQueue struct {
	cfg ReportQueueConfig
	log *slog.Logger

	// ctx ends every attempt and wait when Close gives up; closing is
	// closed when Close starts, waking every wait for one more attempt.
	ctx     context.Context
	abandon context.CancelFunc
	closing chan struct{}
	senders sync.WaitGroup

	mu     sync.Mutex
	slots  map[string]*reportSlot
	closed bool
}

// reportSlot is one instance's report waiting for delivery, and its sender.
type reportSlot struct {
	pending StatusReport
	// version counts the reports put in the slot, so that a sender knows
	// whether the one it delivered is still the latest.
	version uint64
	// cancel ends the attempt or wait in flight, of an older report.
	cancel context.CancelFunc
	// failures counts the failed attempts since the last delivery: the
	// backoff grows with it, across superseded reports too.
	failures int
}

// NewReportQueue returns a queue that delivers through cfg.Reporter. It
// panics without a Reporter.
func NewReportQueue(cfg ReportQueueConfig) *ReportQueue {
	if cfg.Reporter == nil {
		panic("provider: ReportQueueConfig.Reporter is required")
	}
	cfg.Retry = cfg.Retry.withDefaults(30*time.Second, 0)
	cfg.AttemptTimeout = cmpDuration(cfg.AttemptTimeout, 30*time.Second)
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &ReportQueue{
		cfg: cfg, log: logger, ctx: ctx, abandon: cancel,
		closing: make(chan struct{}), slots: make(map[string]*reportSlot),
	}
}

// Report queues r for delivery and returns at once; ctx is not used. It
// replaces a report of the same instance not yet delivered, unless r was
// observed before it. A zero ObservedTime is set to now. It returns an
// error wrapping [ErrInvalidReport] for a report without an instance id or
// with an unknown status, and [ErrQueueClosed] after Close.
func (q *ReportQueue) Report(_ context.Context, r StatusReport) error {
	r, err := checkReport(r)
	if err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return fmt.Errorf("report status %s of %q: %w", r.Status, r.InstanceID, ErrQueueClosed)
	}
	s, sending := q.slots[r.InstanceID]
	if !sending {
		s = &reportSlot{pending: r}
		q.slots[r.InstanceID] = s
		q.senders.Go(func() { q.send(r.InstanceID, s) })
		return nil
	}
	if r.ObservedTime.Before(s.pending.ObservedTime) {
		return nil
	}
	s.pending = r
	s.version++
	if s.cancel != nil {
		s.cancel() // the attempt in flight is of an older report
	}
	return nil
}

// Pending returns how many instances have a report not yet delivered.
func (q *ReportQueue) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.slots)
}

// send delivers the latest report of instance id until none waits.
func (q *ReportQueue) send(id string, s *reportSlot) {
	for {
		q.mu.Lock()
		r, version := s.pending, s.version
		ctx, cancel := context.WithCancel(q.ctx)
		s.cancel = cancel
		q.mu.Unlock()

		err := q.attempt(ctx, r)
		superseded := ctx.Err() != nil && q.ctx.Err() == nil
		log := q.log.With("instance_id", id, "status", string(r.Status))
		switch {
		case err == nil:
			if q.finish(id, s, version, true) {
				cancel()
				return
			}
		case superseded:
		case q.ctx.Err() != nil:
			log.Error("status report abandoned: the queue closed before Steward took it", "error", err)
			q.finish(id, s, version, false)
			cancel()
			return
		case Refused(err):
			log.Error("status report refused by Steward; not retried", "error", err)
			if q.finish(id, s, version, false) {
				cancel()
				return
			}
		default:
			s.failures++
			wait := q.cfg.Retry.wait(s.failures-1, rand.Float64())
			log.Warn("status report failed; will retry", "failures", s.failures, "wait", wait, "error", err)
			q.wait(ctx, wait)
		}
		cancel()
	}
}

// attempt makes one attempt to deliver r, within AttemptTimeout.
func (q *ReportQueue) attempt(ctx context.Context, r StatusReport) error {
	ctx, cancel := context.WithTimeout(ctx, q.cfg.AttemptTimeout)
	defer cancel()
	return q.cfg.Reporter.Report(ctx, r)
}

// finish ends the sender of instance id if the report of version, just
// delivered (or given up), is still its latest, and returns whether it
// did. delivered resets the backoff.
func (q *ReportQueue) finish(id string, s *reportSlot, version uint64, delivered bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if delivered {
		s.failures = 0
	}
	if s.version != version && q.ctx.Err() == nil {
		return false // a newer report came meanwhile
	}
	delete(q.slots, id)
	return true
}

// wait waits d, or less when ctx ends (a newer report, or Close giving up)
// or Close starts, which tries every waiting report once more at once;
// later waits, during Close, are waited out.
func (q *ReportQueue) wait(ctx context.Context, d time.Duration) {
	closing := q.closing
	select {
	case <-closing:
		closing = nil
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-closing:
	}
}

// Close stops taking reports and delivers those waiting until they are
// delivered or ctx ends; then it abandons the rest, logging each, and
// returns an error wrapping ctx's error that counts them. Close is
// idempotent.
func (q *ReportQueue) Close(ctx context.Context) error {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.closing)
	}
	q.mu.Unlock()
	done := make(chan struct{})
	go func() {
		q.senders.Wait()
		close(done)
	}()
	select {
	case <-done:
		q.abandon()
		return nil
	case <-ctx.Done():
	}
	n := q.Pending()
	q.abandon()
	<-done
	if n == 0 {
		return nil
	}
	return fmt.Errorf("provider: %d status reports not delivered: %w", n, ctx.Err())
}
