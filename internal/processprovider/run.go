package processprovider

import (
	"errors"
	"fmt"
	"log/slog"
	"syscall"
	"time"
)

// runHandle is the supervisor's hold on one run: one member's process,
// supervised under the restart policy of one spec generation.
type runHandle struct {
	m *member
	// quit is closed by the supervisor to end the run: its process is
	// stopped and not restarted.
	quit chan struct{}
	// detach is closed by the supervisor when the provider stops: the run
	// ends and leaves its process running, for the next provider to adopt.
	detach chan struct{}
	// done is closed when the run has returned; after quit, its process
	// group is gone then.
	done chan struct{}
	// first receives the outcome of the run's first start (buffered), once
	// it is recorded, so a repair learns whether the member it restarted
	// runs, and a restoring supervisor when every member has settled; an
	// adopted process counts as started, and a run that starts nothing
	// answers an error.
	first chan error
}

// resume is how a run takes over a member an earlier provider recorded
// (see Restore); nil for a run of this provider's own making.
type resume struct {
	// proc is the member's process, still running: the run adopts it.
	proc *process
	// gone is how the recorded process ended while no provider watched
	// it: the restart policy decides, as for any exit.
	gone *exit
	// idle says the run has nothing to do: the member had failed for good,
	// or the instance is being deleted and its process is gone.
	idle bool
}

// errNotStarted answers first for a run that ended without starting or
// adopting a process.
var errNotStarted = errors.New("the run ended before a process started")

// startRun starts supervising member m under spec s, generation gen, on a
// goroutine of its own, taking over a recorded process as res says (nil:
// start one); the supervisor that calls it waits for its end.
func (p *Provider) startRun(in *instance, m *member, s spec, gen int, log *slog.Logger, res *resume) *runHandle {
	h := &runHandle{m: m, quit: make(chan struct{}), detach: make(chan struct{}), done: make(chan struct{}),
		first: make(chan error, 1)}
	go p.run(in, h, s, gen, log, res)
	return h
}

// end closes the run's quit and waits until the run has returned.
func (h *runHandle) end() {
	close(h.quit)
	<-h.done
}

// run runs the member's process of spec s, restarting it as the policy
// says, and records each change (see memberStarted and its siblings). It
// returns once h.quit is closed, with the process stopped, once h.detach is
// closed, with the process left running, or once the process is over for
// good. With res it first takes over what an earlier provider left.
func (p *Provider) run(in *instance, h *runHandle, s spec, gen int, log *slog.Logger, res *resume) {
	defer close(h.done)
	answered := false
	answer := func(err error) {
		if !answered {
			answered = true
			h.first <- err
		}
	}
	defer answer(errNotStarted)
	m := h.m
	if len(s.members) > 0 {
		log = log.With("member_id", m.id)
	}
	// The counts go on from the member's: zero for a new one, recorded for
	// an adopted one.
	in.mu.Lock()
	restarts, consecutive, last, startedAt := m.restarts, m.consecutive, m.lastExit, m.startedAt
	in.mu.Unlock()

	var proc *process
	switch {
	case res == nil:
	case res.idle:
		return
	case res.proc != nil:
		proc = res.proc
	case res.gone != nil:
		// It ended while the provider was down: the policy decides at once,
		// without a backoff (the downtime was one).
		e := *res.gone
		if p.cfg.Now().Sub(startedAt) >= p.cfg.RestartResetAfter {
			consecutive = 0
		}
		restart, why := decide(s, consecutive, e)
		if !restart {
			log.Info("process ended while the provider was down; not restarting", "exit", e.String())
			// Its start is not known: the log's last lines say why.
			p.processEnded(in, m, gen, s, e, why+" (it ended while the provider was down)", 0)
			return
		}
		consecutive++
		restarts++
		last = e.String()
		p.memberRestarting(in, m, gen, restarts, consecutive, e,
			fmt.Sprintf("process %v while the provider was down; restart %d of %d", e, consecutive, s.maxRestarts))
		log.Info("process ended while the provider was down; restarting", "exit", e.String())
	}

	for {
		adopted := proc != nil
		if !adopted {
			if closed(h.quit) || closed(h.detach) {
				return // ended before (re)starting
			}
			var err error
			proc, err = startProcess(m, s)
			if err != nil {
				log.Warn("process did not start", "error", err)
				p.memberEnded(in, m, gen, false, "start process: "+err.Error())
				answer(err)
				return
			}
			startedAt = p.cfg.Now()
		}
		msg := fmt.Sprintf("running as pid %d", proc.pid)
		if adopted {
			msg += " (adopted after a provider restart)"
		}
		if restarts > 0 {
			msg += fmt.Sprintf("; restarted %d times, last because the process %s", restarts, last)
		}
		p.memberStarted(in, m, gen, proc, startedAt, msg)
		answer(nil) // after memberStarted: who waits sees the member run
		log.Info("process started", "pid", proc.pid, "restarts", restarts, "adopted", adopted)

		e, detached := p.await(proc, h, log)
		if detached {
			log.Info("provider stopping; process left running", "pid", proc.pid)
			return
		}
		p.memberGone(in, m)
		if closed(h.quit) {
			log.Info("process stopped", "pid", proc.pid, "exit", e.String())
			return
		}
		pid, stderrFrom := proc.pid, proc.stderrFrom
		proc = nil
		last = e.String()
		if p.cfg.Now().Sub(startedAt) >= p.cfg.RestartResetAfter {
			consecutive = 0
		}
		restart, why := decide(s, consecutive, e)
		if !restart {
			log.Info("process ended; not restarting", "pid", pid, "exit", e.String())
			p.processEnded(in, m, gen, s, e, why, stderrFrom)
			return
		}
		consecutive++
		restarts++
		delay := backoff(p.cfg.RestartBackoff, p.cfg.RestartBackoffMax, consecutive)
		if !p.memberRestarting(in, m, gen, restarts, consecutive, e,
			fmt.Sprintf("process %v; restart %d of %d in %v", e, consecutive, s.maxRestarts, delay)) {
			return // an update replaced the spec: the supervisor starts the new one
		}
		log.Info("process ended; restarting", "pid", pid, "exit", e.String(), "delay", delay)
		if !sleepUnless(h, delay) {
			return
		}
	}
}

// processEnded records that m's process ended as e for good, with why
// (from decide): completed, or failed, when why gets the last lines the
// process wrote to stderr after offset stderrFrom of stderr.log.
func (p *Provider) processEnded(in *instance, m *member, gen int, s spec, e exit, why string, stderrFrom int64) {
	done := completed(s, e)
	if !done {
		why = withStderr(why, m, stderrFrom)
	}
	p.memberEnded(in, m, gen, done, why)
}

// await watches the process, polling it every WatchInterval, until it ends
// on its own, h.quit is closed (it stops the process) or h.detach is
// closed (it leaves it running and reports detached). An ended process is
// returned once its whole group is gone.
func (p *Provider) await(proc *process, h *runHandle, log *slog.Logger) (e exit, detached bool) {
	tick := time.NewTicker(p.cfg.WatchInterval)
	defer tick.Stop()
	for {
		if e, ok := proc.poll(); ok {
			if err := proc.killGroup(); err != nil {
				log.Warn("process group outlived its leader", "error", err)
			}
			return e, false
		}
		select {
		case <-tick.C:
		case <-h.quit:
			e, err := p.stopProcess(proc)
			if err != nil {
				log.Warn("process group outlived its leader", "error", err)
			}
			return e, false
		case <-h.detach:
			return exit{}, true
		}
	}
}

// stopPollMax bounds how often a stopping process is polled: a delete
// should not wait out a long WatchInterval.
const stopPollMax = 10 * time.Millisecond

// stopProcess ends the process group: SIGTERM, then SIGKILL once StopGrace
// has passed or the provider's Stop is in a hurry, whichever comes first.
// It returns once the leader has ended and the rest of its group is killed
// (see killGroup).
func (p *Provider) stopProcess(proc *process) (exit, error) {
	proc.signalGroup(syscall.SIGTERM)
	grace := time.NewTimer(p.cfg.StopGrace)
	defer grace.Stop()
	tick := time.NewTicker(min(p.cfg.WatchInterval, stopPollMax))
	defer tick.Stop()
	hurry := p.hurry
	for {
		if e, ok := proc.poll(); ok {
			return e, proc.killGroup()
		}
		select {
		case <-tick.C:
		case <-grace.C:
			proc.signalGroup(syscall.SIGKILL)
		case <-hurry:
			proc.signalGroup(syscall.SIGKILL)
			hurry = nil
		}
	}
}

// sleepUnless waits d and returns true, or returns false as soon as the
// run's quit or detach is closed.
func sleepUnless(h *runHandle, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-h.quit:
		return false
	case <-h.detach:
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
