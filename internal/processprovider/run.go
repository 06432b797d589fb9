package processprovider

import (
	"fmt"
	"log/slog"
	"time"
)

// runHandle is the supervisor's hold on one run: one member's process,
// supervised under the restart policy of one spec generation.
type runHandle struct {
	m *member
	// quit is closed by the supervisor to end the run: its process is
	// stopped and not restarted.
	quit chan struct{}
	// done is closed when the run has returned and its process group is
	// gone.
	done chan struct{}
	// first receives the outcome of the run's first start (buffered), so a
	// repair learns whether the member it restarted runs.
	first chan error
}

// startRun starts supervising member m under spec s, generation gen, on a
// goroutine of its own; the supervisor that calls it waits for its end.
func (p *Provider) startRun(in *instance, m *member, s spec, gen int, log *slog.Logger) *runHandle {
	h := &runHandle{m: m, quit: make(chan struct{}), done: make(chan struct{}), first: make(chan error, 1)}
	go p.run(in, h, s, gen, log)
	return h
}

// end closes the run's quit and waits until the run has returned.
func (h *runHandle) end() {
	close(h.quit)
	<-h.done
}

// run runs the member's process of spec s, restarting it as the policy
// says, and records each change (see memberStarted and its siblings). It
// returns once h.quit is closed, with the process stopped, or once the
// process is over for good.
func (p *Provider) run(in *instance, h *runHandle, s spec, gen int, log *slog.Logger) {
	defer close(h.done)
	m := h.m
	if len(s.members) > 0 {
		log = log.With("member_id", m.id)
	}
	var (
		restarts    int // all restarts, for the message
		consecutive int // restarts since the last long run; max_restarts bounds it
		last        exit
	)
	for first := true; ; first = false {
		if closed(h.quit) {
			return // ended before (re)starting
		}
		proc, err := startProcess(m, s)
		if first {
			h.first <- err
		}
		if err != nil {
			log.Warn("process did not start", "error", err)
			p.memberEnded(in, m, gen, "start process: "+err.Error())
			return
		}
		startedAt := p.cfg.Now()
		msg := fmt.Sprintf("running as pid %d", proc.pid)
		if restarts > 0 {
			msg += fmt.Sprintf("; restarted %d times, last because the process %v", restarts, last)
		}
		p.memberStarted(in, m, gen, proc.pid, msg)
		log.Info("process started", "pid", proc.pid, "restarts", restarts)

		e := p.await(proc, h.quit, log)
		p.memberGone(in, m)
		if closed(h.quit) {
			log.Info("process stopped", "pid", proc.pid, "exit", e.String())
			return
		}
		last = e
		if p.cfg.Now().Sub(startedAt) >= p.cfg.RestartResetAfter {
			consecutive = 0
		}
		restart, why := decide(s, consecutive, e)
		if !restart {
			log.Info("process ended; not restarting", "pid", proc.pid, "exit", e.String())
			p.memberEnded(in, m, gen, why)
			return
		}
		consecutive++
		restarts++
		delay := backoff(p.cfg.RestartBackoff, p.cfg.RestartBackoffMax, consecutive)
		if !p.memberRestarting(in, m, gen, fmt.Sprintf("process %v; restart %d of %d in %v", e, consecutive, s.maxRestarts, delay)) {
			return // an update replaced the spec: the supervisor starts the new one
		}
		log.Info("process ended; restarting", "pid", proc.pid, "exit", e.String(), "delay", delay)
		if !sleepUnless(h.quit, delay) {
			return
		}
	}
}

// await waits until the process ends on its own, or stops it once quit is
// closed, and returns how it ended once its whole group is gone.
func (p *Provider) await(proc *process, quit <-chan struct{}, log *slog.Logger) exit {
	var (
		e   exit
		err error
	)
	select {
	case e = <-proc.done:
		err = proc.killGroup()
	case <-quit:
		e, err = proc.stop(p.cfg.StopGrace, p.hurry)
	}
	if err != nil {
		log.Warn("process group outlived its leader", "error", err)
	}
	return e
}

// sleepUnless waits d and returns true, or returns false as soon as quit is
// closed.
func sleepUnless(quit <-chan struct{}, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-quit:
		return false
	}
}

// closed reports, without blocking, whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
