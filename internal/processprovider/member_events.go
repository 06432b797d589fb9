package processprovider

import (
	"fmt"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// The member* methods record what a run saw of its member's process, for a
// run of spec generation gen. A run of a replaced generation still records
// its pid (the process is real until stopped) but changes no status: the
// new spec's members own it now.
//
// Without spec.members the one implicit member's state is the instance's
// status, as before members existed: its exit is FAILED. With members, a
// member's exit changes only its health in the runtime state; the instance
// is RUNNING once every member has started.

// memberStarted records that m's process runs as proc, started at
// startedAt (by Config.Now; earlier for an adopted process).
func (p *Provider) memberStarted(in *instance, m *member, gen int, proc *process, startedAt time.Time, msg string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	defer p.saveLocked(in)
	m.pid, m.startTime, m.startedAt = proc.pid, proc.startTime, startedAt
	if gen != in.gen {
		return
	}
	m.started, m.failed, m.message = true, false, msg
	if !in.hasMembersLocked() {
		p.recordLocked(in, provider.StatusRunning, msg)
		return
	}
	if in.status != provider.StatusRunning && allStarted(in.members) {
		p.recordLocked(in, provider.StatusRunning, fmt.Sprintf("all %d members started", len(in.members)))
	}
	p.runtimeChangedLocked(in, false)
}

// memberRestarting records that m's process ended as last and is
// restarted after a delay, with the restart counts run keeps: the member is
// still kept up. It returns false when gen is replaced, so the run need not
// restart a process of the old spec.
func (p *Provider) memberRestarting(in *instance, m *member, gen int, restarts, consecutive int, last exit, msg string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if gen != in.gen {
		return false
	}
	defer p.saveLocked(in)
	m.restarts, m.consecutive, m.lastExit = restarts, consecutive, last.String()
	m.message = msg
	if !in.hasMembersLocked() {
		// Still RUNNING: no report; Get shows the message.
		p.recordLocked(in, provider.StatusRunning, msg)
		return true
	}
	p.runtimeChangedLocked(in, false)
	return true
}

// memberEnded records that m runs no process and none will be restarted;
// done says it ran to its end and succeeded, which makes an instance
// without members COMPLETED instead of FAILED. Before every member has
// first started, a member that could not start makes the instance FAILED,
// as a command that cannot start does without members.
func (p *Provider) memberEnded(in *instance, m *member, gen int, done bool, msg string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	defer p.saveLocked(in)
	m.pid = 0
	if gen != in.gen {
		return
	}
	m.failed, m.message = true, msg
	if !in.hasMembersLocked() {
		status := provider.StatusFailed
		if done {
			status = provider.StatusCompleted
		}
		p.recordLocked(in, status, msg)
		return
	}
	if !m.started && in.status != provider.StatusRunning {
		p.recordLocked(in, provider.StatusFailed, "member "+m.id+": "+msg)
	}
	p.runtimeChangedLocked(in, false)
}

// memberGone records that m's process group is gone.
func (p *Provider) memberGone(in *instance, m *member) {
	in.mu.Lock()
	defer in.mu.Unlock()
	m.pid = 0
	p.saveLocked(in)
}

// memberRepairing clears m's failure and restart counts before a repair
// starts it again.
func (p *Provider) memberRepairing(in *instance, m *member) {
	in.mu.Lock()
	defer in.mu.Unlock()
	m.failed, m.message = false, "restarting for a repair"
	m.restarts, m.consecutive, m.lastExit = 0, 0, ""
	p.saveLocked(in)
}

// allStarted reports whether every member has started at least once.
func allStarted(members []*member) bool {
	for _, m := range members {
		if !m.started {
			return false
		}
	}
	return true
}
