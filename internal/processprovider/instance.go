package processprovider

import (
	"sync"

	"github.com/stewardhq/steward/pkg/provider"
)

// instance is one supervised instance. Its supervisor goroutine owns the
// processes of its members; Create, Update, Delete, Get, Stop and repairs
// talk to it only through the fields below.
type instance struct {
	id string
	// dir is WorkDir/<id>: the directory of its process, or of its members'
	// directories.
	dir string
	// project and appInstanceID say whose order the instance realises (the
	// create request's metadata): where runtime reports go.
	project       string
	appInstanceID string
	out           *outbox
	// runtimeOut holds the newest runtime report not yet sent.
	runtimeOut *latestBox

	// deleteCh is closed by Delete, stopCh by Stop; the supervisor selects
	// on both.
	deleteCh   chan struct{}
	deleteOnce sync.Once
	stopCh     chan struct{}
	stopOnce   sync.Once
	// updated wakes the supervisor after Update changed the spec. It holds
	// one wake-up at most; the supervisor compares generations on waking,
	// so no update is missed and a stale wake-up restarts nothing.
	updated chan struct{}
	// restarts carries a repair's requests to restart a member to the
	// supervisor, which owns the processes.
	restarts chan restartRequest
	// gone is closed when the supervisor has returned: nobody is left to
	// answer restarts.
	gone chan struct{}

	mu sync.Mutex
	// spec is what the instance should run; gen counts its changes, so a
	// status for the process of a replaced spec can be told and dropped.
	spec    spec
	gen     int
	status  provider.Status
	message string
	// reportedRestarts is the restart count of the last report queued.
	reportedRestarts int64
	// members are the current spec's, built with it.
	members []*member
	// retired are the members of replaced specs whose runs may still hold a
	// process, until the supervisor has stopped them all; the record keeps
	// their processes, so a provider that dies meanwhile does not leave
	// them running unknown.
	retired []*member
	// removed says the record is gone with the instance: nothing may write
	// it again.
	removed bool
	// restoring is set while the supervisor of an instance taken over from
	// a record has not yet settled every member: status changes are
	// recorded but not reported, and then the status is reported once
	// (see reportRestored).
	restoring bool
	// lastRuntime is the key (runtimeKey) of the last runtime state
	// queued, so only changes are reported.
	lastRuntime string
	repairs     repairBook
}

func newInstance(id string, s spec, dir string, meta provider.CreateMetadata) *instance {
	return &instance{
		id:            id,
		spec:          s,
		dir:           dir,
		project:       meta.Project,
		appInstanceID: meta.OrderID,
		out:           &outbox{},
		runtimeOut:    &latestBox{},
		deleteCh:      make(chan struct{}),
		stopCh:        make(chan struct{}),
		updated:       make(chan struct{}, 1),
		restarts:      make(chan restartRequest),
		gone:          make(chan struct{}),
		status:        provider.StatusProvisioning,
		message:       "starting",
		members:       newMembers(id, dir, s),
	}
}

// snapshot is the instance as Get answers it.
func (in *instance) snapshot() provider.Instance {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.snapshotLocked()
}

// snapshotLocked is snapshot for a caller that holds in.mu.
func (in *instance) snapshotLocked() provider.Instance {
	return provider.Instance{InstanceID: in.id, Status: in.status, Message: in.message}
}

// current returns the spec to run, its generation and its members.
func (in *instance) current() (spec, int, []*member) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.spec, in.gen, in.members
}

// setSpecLocked makes s the spec to run, as a new generation with new
// members; the caller holds in.mu.
func (in *instance) setSpecLocked(s spec) {
	in.spec, in.gen = s, in.gen+1
	in.retired = append(in.retired, in.members...)
	in.members = newMembers(in.id, in.dir, s)
}

// hasMembersLocked reports whether the spec lists members; an instance without
// them runs one implicit member and reports no runtime. The caller holds
// in.mu.
func (in *instance) hasMembersLocked() bool { return len(in.spec.members) > 0 }

// memberLocked returns the current member with id, or nil; the caller
// holds in.mu.
func (in *instance) memberLocked(id string) *member {
	for _, m := range in.members {
		if m.id == id {
			return m
		}
	}
	return nil
}

// views copies the current members' state.
func (in *instance) views() []memberView {
	in.mu.Lock()
	defer in.mu.Unlock()
	vs := make([]memberView, len(in.members))
	for i, m := range in.members {
		vs[i] = m.view()
	}
	return vs
}

// memberFailed reports whether m runs no process and none will be
// restarted.
func (in *instance) memberFailed(m *member) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return m.failed
}

// memberPID returns the pid of the current member id's running process, 0
// when it has none.
func (in *instance) memberPID(id string) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	if m := in.memberLocked(id); m != nil {
		return m.pid
	}
	return 0
}

// generation returns the generation of the spec to run.
func (in *instance) generation() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.gen
}

// wake tells the supervisor the spec changed, without blocking: a wake-up
// already waiting covers this change too.
func (in *instance) wake() {
	select {
	case in.updated <- struct{}{}:
	default:
	}
}

// set records a status and message and reports whether the status changed.
func (in *instance) set(s provider.Status, msg string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.setLocked(s, msg)
}

// setLocked is set for a caller that holds in.mu. Once DELETING, only
// DELETED is accepted: a process that exits on its own while being deleted
// must not flip the instance to FAILED on its way out.
func (in *instance) setLocked(s provider.Status, msg string) bool {
	if in.status == provider.StatusDeleting && s != provider.StatusDeleted {
		return false
	}
	changed := in.status != s
	in.status, in.message = s, msg
	return changed
}

// restartsLocked is how many times the current spec's processes have been
// restarted, over every member; the caller holds in.mu.
func (in *instance) restartsLocked() int64 {
	var n int64
	for _, m := range in.members {
		n += int64(m.restarts)
	}
	return n
}

// requestDelete marks the instance DELETING, records that, and tells its
// supervisor. Idempotent.
func (p *Provider) requestDelete(in *instance) {
	in.mu.Lock()
	in.setLocked(provider.StatusDeleting, "stopping")
	p.saveLocked(in)
	in.mu.Unlock()
	in.deleteOnce.Do(func() { close(in.deleteCh) })
}

// requestStop tells the supervisor the provider is stopping. Idempotent.
func (in *instance) requestStop() {
	in.stopOnce.Do(func() { close(in.stopCh) })
}

// deleting reports whether a delete was requested.
func (in *instance) deleting() bool { return closed(in.deleteCh) }
