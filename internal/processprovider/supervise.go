package processprovider

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// supervise owns one instance from its start until it is deleted or the
// provider stops: it runs the process, applies the restart policy, and
// reports each status change.
func (p *Provider) supervise(in *instance) {
	log := p.logger.With("instance_id", in.id)
	var (
		restarts    int // all restarts, for the message
		consecutive int // restarts since the last long run; max_restarts bounds it
		last        exit
	)
	for {
		if in.ending() {
			break // deleted or stopped before (re)starting
		}
		proc, err := startProcess(in)
		if err != nil {
			log.Warn("process did not start", "error", err)
			p.setStatus(in, provider.StatusFailed, "start process: "+err.Error())
			break
		}
		startedAt := p.cfg.Now()
		in.setPID(proc.pid)
		msg := fmt.Sprintf("running as pid %d", proc.pid)
		if restarts > 0 {
			msg += fmt.Sprintf("; restarted %d times, last because the process %v", restarts, last)
		}
		p.setStatus(in, provider.StatusRunning, msg)
		log.Info("process started", "pid", proc.pid, "restarts", restarts)

		e := p.await(in, proc, log)
		if in.ending() {
			log.Info("process stopped", "pid", proc.pid, "exit", e.String())
			break
		}
		last = e
		if p.cfg.Now().Sub(startedAt) >= p.cfg.RestartResetAfter {
			consecutive = 0
		}
		restart, why := decide(in.spec, consecutive, e)
		if !restart {
			log.Info("process ended; not restarting", "pid", proc.pid, "exit", e.String())
			p.setStatus(in, provider.StatusFailed, why)
			break
		}
		consecutive++
		restarts++
		delay := backoff(p.cfg.RestartBackoff, p.cfg.RestartBackoffMax, consecutive)
		// Still RUNNING: the service is being kept up. No report; Get shows it.
		p.setStatus(in, provider.StatusRunning, fmt.Sprintf("process %v; restart %d of %d in %v",
			e, consecutive, in.spec.maxRestarts, delay))
		log.Info("process ended; restarting", "pid", proc.pid, "exit", e.String(), "delay", delay)
		if !p.wait(in, delay) {
			break
		}
	}
	// A FAILED instance waits here, held, until it is deleted or the
	// provider stops. A delete wins over a stop: its process is gone too.
	select {
	case <-in.deleteCh:
		p.finishDelete(in)
		return
	default:
	}
	select {
	case <-in.deleteCh:
		p.finishDelete(in)
	case <-in.stopCh:
		if in.snapshot().Status != provider.StatusFailed {
			p.setStatus(in, provider.StatusFailed, "provider stopped: the process was stopped with it")
		}
	}
}

// await waits until the process ends on its own, or stops it on a delete or
// a stop, and returns how it ended once its whole group is gone.
func (p *Provider) await(in *instance, proc *process, log *slog.Logger) exit {
	var (
		e   exit
		err error
	)
	select {
	case e = <-proc.done:
		err = proc.killGroup()
	case <-in.deleteCh:
		e, err = proc.stop(p.cfg.StopGrace, p.hurry)
	case <-in.stopCh:
		e, err = proc.stop(p.cfg.StopGrace, p.hurry)
	}
	if err != nil {
		log.Warn("process group outlived its leader", "error", err)
	}
	in.setPID(0)
	return e
}

// wait waits d and reports whether the instance should go on: false when a
// delete or a stop came first.
func (p *Provider) wait(in *instance, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return !in.ending()
	case <-in.deleteCh:
	case <-in.stopCh:
	}
	return false
}

// finishDelete removes the instance's work directory and forgets it, then
// reports DELETED, so that a Get after that report answers ErrNotFound.
func (p *Provider) finishDelete(in *instance) {
	if err := os.RemoveAll(in.dir); err != nil {
		p.logger.Warn("remove work dir", "instance_id", in.id, "error", err)
	}
	p.forget(in)
	p.setStatus(in, provider.StatusDeleted, "deleted")
	p.logger.Info("instance deleted", "instance_id", in.id)
}

// decide applies the restart policy to a process that ended on its own,
// after consecutive restarts. It returns whether to restart and, if not, the
// FAILED message. See doc.go for why a clean exit that is not restarted is
// FAILED.
func decide(s spec, consecutive int, e exit) (restart bool, failed string) {
	switch {
	case e.clean() && s.policy != restartAlways:
		return false, fmt.Sprintf("process completed: it %v and restart_policy is %s, so it is not restarted; "+
			"the service is no longer running", e, s.policy)
	case s.policy == restartNever:
		return false, fmt.Sprintf("process %v; restart_policy never", e)
	case consecutive >= s.maxRestarts:
		return false, fmt.Sprintf("process %v; gave up after %d restarts (max_restarts %d)",
			e, consecutive, s.maxRestarts)
	}
	return true, ""
}

// backoff is the delay before the nth consecutive restart (n ≥ 1): initial,
// doubled n-1 times, capped at maxDelay.
func backoff(initial, maxDelay time.Duration, n int) time.Duration {
	d := initial
	for i := 1; i < n && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}
