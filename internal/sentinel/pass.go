package sentinel

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/store"
)

// A pass runs its three steps side by side, one batch apart: it reads a
// batch (the candidates and their adapter reports) while it decides the
// one before and writes the one before that. Run one after another, a
// cycle over 100,000 due orders on PostgreSQL waited on the database for
// half its time and kept it idle for the other half. The reads do not
// depend on the writes: a batch written leaves the range the next read
// walks (its marks are due after now, or now exist) and the next read
// starts after the last candidate read.

// readBatch is a batch read: the candidates to decide, their reports, and
// the marks to defer without a decision.
type readBatch struct {
	decide   []candidate
	reports  map[string][]report
	deferred []deferRow
	err      error
}

// decidedBatch is a batch decided, to write.
type decidedBatch struct {
	outs     []outcome
	deferred []deferRow
}

// pass decides what next finds, batch by batch from (from, ""): the
// candidates of watched types; a terminal order's mark is parked and the
// mark of a type no longer watched deferred by max age.
func (s *Service) pass(ctx context.Context, watched map[string][]string, now, from time.Time, st *CycleStats,
	next func(afterTime time.Time, afterID string) ([]candidate, error)) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reads := make(chan readBatch, 1)
	go s.readBatches(ctx, reads, watched, now, from, next)
	writes := make(chan decidedBatch, 1)
	written := make(chan error, 1)
	var wst CycleStats
	go func() { written <- s.writeBatches(ctx, cancel, writes, now, &wst) }()

	var readErr error
	for r := range reads {
		if r.err != nil {
			readErr = r.err
			break
		}
		d := s.decide(ctx, r, watched, now, st)
		select {
		case writes <- d:
		case <-ctx.Done():
		}
	}
	close(writes)
	writeErr := <-written
	cancel()
	for range reads { // until the reader has stopped
	}
	st.Published += wst.Published
	st.Lost += wst.Lost
	// A write's error first: it cancels the reads, which may then fail.
	return cmp.Or(writeErr, readErr, parent.Err())
}

// readBatches sends the batches next finds to out, each with its
// candidates' adapter reports, and closes out after the last (a short
// batch), an error, or ctx's end.
func (s *Service) readBatches(ctx context.Context, out chan<- readBatch, watched map[string][]string, now, from time.Time,
	next func(afterTime time.Time, afterID string) ([]candidate, error)) {
	defer close(out)
	afterTime, afterID := from, ""
	for {
		batch, err := next(afterTime, afterID)
		if err != nil || len(batch) == 0 {
			if err != nil {
				send(ctx, out, readBatch{err: err})
			}
			return
		}
		last := batch[len(batch)-1]
		afterTime, afterID = last.key, last.id
		r := readBatch{decide: batch[:0:0]}
		for _, c := range batch {
			if c.gone {
				continue
			}
			if _, ok := watched[c.serviceType]; ok && !c.terminal {
				r.decide = append(r.decide, c)
				continue
			}
			d := deferRow{ID: c.id} // terminal: parked
			if !c.terminal {
				due := store.FormatTime(now.Add(s.cfg.MaxAge))
				d.Due = &due
			}
			r.deferred = append(r.deferred, d)
		}
		if len(r.decide) > 0 {
			r.reports, r.err = s.reports(ctx, r.decide)
		}
		if !send(ctx, out, r) || r.err != nil || len(batch) < s.cfg.BatchSize {
			return
		}
	}
}

// send sends v on out unless ctx ends first, and says whether it did.
func send[T any](ctx context.Context, out chan<- T, v T) bool {
	select {
	case out <- v:
		return true
	case <-ctx.Done():
		return false
	}
}

// decide decides a batch read, counting its candidates and failed
// decisions in st.
func (s *Service) decide(ctx context.Context, r readBatch, watched map[string][]string, now time.Time, st *CycleStats) decidedBatch {
	d := decidedBatch{outs: make([]outcome, 0, len(r.decide)), deferred: r.deferred}
	for _, c := range r.decide {
		rs := r.reports[c.id]
		ready := converged(c.deleting(), c.generation, watched[c.serviceType], rs)
		publish, reason, err := s.decider.decide(s.vars(c, ready, rs, now))
		if err != nil {
			st.Failed++
			s.logger.WarnContext(ctx, "decision failed; the order is not published", "order_id", c.id, "error", err)
			continue // not marked: decided again next cycle
		}
		d.outs = append(d.outs, outcome{c: c, ready: ready, publish: publish, reason: reason})
	}
	st.Candidates += len(r.decide)
	return d
}

// writeBatches writes each batch decided, its outcome and its marks
// deferred in one transaction, counting what it published and lost in st.
// Its first error cancels the pass (cancel) and is returned.
func (s *Service) writeBatches(ctx context.Context, cancel context.CancelFunc, in <-chan decidedBatch, now time.Time,
	st *CycleStats) error {
	for d := range in {
		var sent []outcome
		var lost int
		record := func(someGone bool) error {
			return s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
				if len(d.deferred) > 0 {
					if _, err := s.q.SentinelMarksDefer(ctx, tx, store.JSON(d.deferred), now); err != nil {
						return err
					}
				}
				var err error
				sent, lost, err = s.recordTx(ctx, tx, d.outs, now, someGone) // InTx may run fn again: set, not add
				return err
			})
		}
		err := record(false)
		if errors.Is(err, store.ErrNoReferent) {
			// An order was removed since it was read: its mark has nothing
			// to refer to. Rare, so only then are the orders looked up.
			err = record(true)
		}
		if err != nil {
			cancel()
			return fmt.Errorf("sentinel: record decisions: %w", err)
		}
		st.Published += len(sent)
		st.Lost += lost
		for _, o := range sent {
			s.m.published.WithLabelValues(o.c.serviceType, cmp.Or(o.reason, "result")).Inc()
		}
		if len(sent) > 0 && s.cfg.Notify != nil {
			s.cfg.Notify()
		}
	}
	return nil
}
