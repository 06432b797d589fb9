package processprovider

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// supervise owns one instance from its start until it is deleted or the
// provider stops: it runs the process of the instance's spec, applies the
// restart policy, runs the new spec after an update, and reports each
// status change.
func (p *Provider) supervise(in *instance) {
	log := p.logger.With("instance_id", in.id)
	for {
		s, gen := in.current()
		if p.run(in, s, gen, log) {
			continue // updated: run the new spec
		}
		if !p.hold(in, gen) {
			return
		}
	}
}

// run runs the process of spec s, generation gen, restarting it as the
// policy says. It returns true once an update has replaced s (its process is
// stopped by then), and false once the instance is deleted, the provider
// stops, or the process is FAILED for good.
func (p *Provider) run(in *instance, s spec, gen int, log *slog.Logger) (updated bool) {
	var (
		restarts    int // all restarts, for the message
		consecutive int // restarts since the last long run; max_restarts bounds it
		last        exit
	)
	for {
		if in.ending() {
			return false // deleted or stopped before (re)starting
		}
		proc, err := startProcess(in, s)
		if err != nil {
			log.Warn("process did not start", "error", err)
			return !p.setStatusFor(in, gen, provider.StatusFailed, "start process: "+err.Error())
		}
		startedAt := p.cfg.Now()
		in.setPID(proc.pid)
		msg := fmt.Sprintf("running as pid %d", proc.pid)
		if restarts > 0 {
			msg += fmt.Sprintf("; restarted %d times, last because the process %v", restarts, last)
		}
		// When an update came first, this is dropped and await sees the update.
		p.setStatusFor(in, gen, provider.StatusRunning, msg)
		log.Info("process started", "pid", proc.pid, "restarts", restarts)

		e := p.await(in, proc, gen, log)
		switch {
		case in.ending():
			log.Info("process stopped", "pid", proc.pid, "exit", e.String())
			return false
		case in.generation() != gen:
			log.Info("process stopped for an update", "pid", proc.pid, "exit", e.String())
			return true
		}
		last = e
		if p.cfg.Now().Sub(startedAt) >= p.cfg.RestartResetAfter {
			consecutive = 0
		}
		restart, why := decide(s, consecutive, e)
		if !restart {
			log.Info("process ended; not restarting", "pid", proc.pid, "exit", e.String())
			return !p.setStatusFor(in, gen, provider.StatusFailed, why)
		}
		consecutive++
		restarts++
		delay := backoff(p.cfg.RestartBackoff, p.cfg.RestartBackoffMax, consecutive)
		// Still RUNNING: the service is being kept up. No report; Get shows it.
		if !p.setStatusFor(in, gen, provider.StatusRunning, fmt.Sprintf("process %v; restart %d of %d in %v",
			e, consecutive, s.maxRestarts, delay)) {
			return true
		}
		log.Info("process ended; restarting", "pid", proc.pid, "exit", e.String(), "delay", delay)
		p.wait(in, gen, delay)
		if in.generation() != gen {
			return true
		}
	}
}

// hold keeps a FAILED instance, whose spec was generation gen, until it is
// updated (true: run the new spec), deleted or the provider stops (false).
// A delete wins over a stop: its process is gone too.
func (p *Provider) hold(in *instance, gen int) bool {
	select {
	case <-in.deleteCh:
		p.finishDelete(in)
		return false
	default:
	}
	for {
		select {
		case <-in.deleteCh:
			p.finishDelete(in)
			return false
		case <-in.stopCh:
			if in.snapshot().Status != provider.StatusFailed {
				p.setStatus(in, provider.StatusFailed, "provider stopped: the process was stopped with it")
			}
			return false
		case <-in.updated:
			if in.generation() != gen {
				return true
			}
		}
	}
}

// await waits until the process ends on its own, or stops it on a delete, a
// stop or an update replacing gen, and returns how it ended once its whole
// group is gone.
func (p *Provider) await(in *instance, proc *process, gen int, log *slog.Logger) exit {
	var (
		e   exit
		err error
	)
	for {
		select {
		case e = <-proc.done:
			err = proc.killGroup()
		case <-in.deleteCh:
			e, err = proc.stop(p.cfg.StopGrace, p.hurry)
		case <-in.stopCh:
			e, err = proc.stop(p.cfg.StopGrace, p.hurry)
		case <-in.updated:
			if in.generation() == gen {
				continue // a wake-up for the spec this process runs already
			}
			e, err = proc.stop(p.cfg.StopGrace, p.hurry)
		}
		break
	}
	if err != nil {
		log.Warn("process group outlived its leader", "error", err)
	}
	in.setPID(0)
	return e
}

// wait waits d, or less when the instance is deleted, the provider stops or
// an update replaces gen; the caller tells which from the instance.
func (p *Provider) wait(in *instance, gen int, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			return
		case <-in.deleteCh:
			return
		case <-in.stopCh:
			return
		case <-in.updated:
			if in.generation() != gen {
				return
			}
		}
	}
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
