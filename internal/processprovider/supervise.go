package processprovider

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// supervise owns one instance from its start until it is deleted or the
// provider stops: for each spec generation it runs every member's process
// on a run of its own (see run), restarts members when a repair asks, and
// after an update stops them all and starts the new spec's members. When
// the provider stops it leaves the processes running. An instance an
// earlier provider recorded comes with resumes, by member id, for its
// first generation, and the processes of a replaced spec to stop first
// (see Restore); once every member's run has taken over (adopted, restarted
// or left as it was) its status is reported.
func (p *Provider) supervise(in *instance, r *restoring) {
	defer close(in.gone)
	log := p.logger.With("instance_id", in.id)
	var resumes map[string]*resume
	if r != nil {
		resumes = r.resumes
		if resumes == nil {
			resumes = map[string]*resume{}
		}
		for _, proc := range r.stale {
			log.Info("stopping a process of a replaced spec", "pid", proc.pid)
			if _, err := p.stopProcess(proc); err != nil {
				log.Warn("process group outlived its leader", "error", err)
			}
		}
		if len(r.stale) > 0 {
			p.retiredGone(in)
		}
	}
	for {
		s, gen, members := in.current()
		runs := make(map[string]*runHandle, len(members))
		for _, m := range members {
			runs[m.id] = p.startRun(in, m, s, gen, log, resumes[m.id])
		}
		if resumes != nil {
			for _, h := range runs {
				<-h.first
			}
			p.reportRestored(in)
			resumes = nil
		}
		why := p.watch(in, s, gen, runs, log)
		// Every member stops at once, as one process group did before
		// members existed: a delete or an update replaces them all. When
		// the provider stops, every process is left running instead.
		for _, h := range runs {
			if why == stopped {
				close(h.detach)
			} else {
				close(h.quit)
			}
		}
		for _, h := range runs {
			<-h.done
		}
		switch why {
		case deleted:
			p.finishDelete(in)
			return
		case stopped:
			p.finishStop(in)
			return
		}
		// Updated: the old generation's processes are gone.
		p.retiredGone(in)
	}
}

// ending is why a supervisor stops the runs of a generation.
type ending int

const (
	updated ending = iota
	deleted
	stopped
)

// watch serves the runs of spec s, generation gen, until the instance is
// updated to a new generation, deleted or the provider stops. A run that
// ends on its own stays ended until a repair or an update starts it again.
func (p *Provider) watch(in *instance, s spec, gen int, runs map[string]*runHandle, log *slog.Logger) ending {
	for {
		select {
		case <-in.deleteCh:
			return deleted
		case <-in.stopCh:
			if closed(in.deleteCh) {
				return deleted // a delete wins: its processes are gone too
			}
			return stopped
		case <-in.updated:
			if in.generation() != gen {
				return updated
			}
		case req := <-in.restarts:
			req.reply <- p.restartRun(in, s, gen, runs, req, log)
		}
	}
}

// restartRequest asks the supervisor to start a member's process anew.
type restartRequest struct {
	memberID string
	// onlyFailed restarts the member only when it has failed: a repair
	// leaves a healthy member alone.
	onlyFailed bool
	reply      chan<- restartResult
}

// restartResult is the supervisor's answer to a restartRequest.
type restartResult struct {
	// restarted is false when nothing was done: the member is healthy and
	// onlyFailed was set.
	restarted bool
	// err says why the member could not be restarted.
	err error
}

// restartRun ends the member's run, its process stopped if it runs, and
// starts a new run with a fresh restart count, reporting whether the new
// process started. Members restart one request at a time, so a repair
// never has more than one down by its own doing.
func (p *Provider) restartRun(in *instance, s spec, gen int, runs map[string]*runHandle, req restartRequest, log *slog.Logger) restartResult {
	h, ok := runs[req.memberID]
	if !ok {
		return restartResult{err: fmt.Errorf("member %q is not in the current spec", req.memberID)}
	}
	if req.onlyFailed && !in.memberFailed(h.m) {
		return restartResult{}
	}
	h.end()
	p.memberRepairing(in, h.m)
	nh := p.startRun(in, h.m, s, gen, log, nil)
	runs[req.memberID] = nh
	return restartResult{restarted: true, err: <-nh.first}
}

// finishDelete removes the instance's record and work directory and
// forgets it, then reports DELETED, so that a Get after that report answers
// ErrNotFound.
func (p *Provider) finishDelete(in *instance) {
	p.removeRecord(in)
	if err := os.RemoveAll(in.dir); err != nil {
		p.logger.Warn("remove work dir", "instance_id", in.id, "error", err)
	}
	p.forget(in)
	p.setStatus(in, provider.StatusDeleted, "deleted")
	p.logger.Info("instance deleted", "instance_id", in.id)
}

// finishStop leaves the instance as it is once the provider's Stop has
// ended its runs: its processes run on, and its record (written at every
// change) lets the next provider adopt them. Nothing is reported: the
// service has not changed.
func (p *Provider) finishStop(in *instance) {
	in.mu.Lock()
	defer in.mu.Unlock()
	p.saveLocked(in)
	p.logger.Info("provider stopping; instance left as it is", "instance_id", in.id, "status", string(in.status))
}

// decide applies the restart policy to a process that ended on its own,
// after consecutive restarts. It returns whether to restart and, if not,
// the message of the end: COMPLETED for a clean exit (see completed),
// FAILED otherwise.
func decide(s spec, consecutive int, e exit) (restart bool, why string) {
	switch {
	case completed(s, e):
		return false, fmt.Sprintf("completed: the process %v; restart_policy %s does not restart a clean exit", e, s.policy)
	case s.policy == restartNever:
		return false, fmt.Sprintf("process %v; restart_policy never", e)
	case consecutive >= s.maxRestarts:
		return false, fmt.Sprintf("process %v; gave up after %d restarts (max_restarts %d)",
			e, consecutive, s.maxRestarts)
	}
	return true, ""
}

// completed reports whether a process that ended as e under spec s ran to
// its end and succeeded: it exited 0 and the policy does not restart it.
// See doc.go for why that is COMPLETED, not FAILED.
func completed(s spec, e exit) bool { return e.clean() && s.policy != restartAlways }

// backoff is the delay before the nth consecutive restart (n ≥ 1): initial,
// doubled n-1 times, capped at maxDelay.
func backoff(initial, maxDelay time.Duration, n int) time.Duration {
	d := initial
	for i := 1; i < n && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}
