package server

import (
	"context"
	"time"
)

// resyncPoll is how often a replica looks for due instances: often
// enough that an instance is read within a fraction of ResyncAfter of
// coming due, at most once a second.
func resyncPoll(after time.Duration) time.Duration {
	return min(max(after/4, 50*time.Millisecond), time.Second)
}

// resyncInterval is the resync loop's poll, from the SPRM's ResyncAfter
// (its default applied: from Config.ResyncAfter's zero the loop polled
// every 50 ms, a write transaction each, where once a second was meant).
func (s *Server) resyncInterval() time.Duration { return resyncPoll(s.sprm.ResyncAfter()) }

// startResync starts the loop that reads instances back from their
// providers (sprm.RunResync), unless resync is off or jobs are paused. Every
// replica runs it, not only River's leader: the claims in the database
// share the work, and a replica that dies (even by SIGKILL) stops none of
// it for longer than its peers take to notice.
func (s *Server) startResync(ctx context.Context) {
	if !s.sprm.ResyncEnabled() || s.cfg.PauseJobs {
		s.logger.Info("resync from providers is off")
		return
	}
	_ = s.resync.Start(ctx, func(ctx context.Context) {
		tick := time.NewTicker(s.resyncInterval())
		defer tick.Stop()
		for {
			res, err := s.sprm.RunResync(ctx)
			if err != nil && ctx.Err() == nil {
				s.logger.WarnContext(ctx, "resync pass", "error", err)
			}
			if res.Changed+res.NotFound+res.Errors > 0 {
				s.logger.InfoContext(ctx, "resync pass", "unchanged", res.Unchanged, "changed", res.Changed,
					"not_found", res.NotFound, "stale", res.Stale, "errors", res.Errors)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
}

// stopResync stops the loop and waits for its pass to end (its provider
// calls are bounded by the provider timeout), or for ctx to end.
func (s *Server) stopResync(ctx context.Context) { _ = s.resync.Stop(ctx) }
