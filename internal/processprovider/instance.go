package processprovider

import (
	"sync"

	"github.com/stewardhq/steward/pkg/provider"
)

// instance is one supervised instance. Its supervisor goroutine owns the
// process; Create, Update, Delete, Get and Stop talk to it only through the
// fields below.
type instance struct {
	id string
	// dir is WorkDir/<id>: the process's working directory and log files.
	dir string
	out *outbox

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

	mu sync.Mutex
	// spec is what the instance should run; gen counts its changes, so a
	// status for the process of a replaced spec can be told and dropped.
	spec    spec
	gen     int
	status  provider.Status
	message string
	// pid is the running process's id, 0 when none runs.
	pid int
}

func newInstance(id string, s spec, dir string) *instance {
	return &instance{
		id:       id,
		spec:     s,
		dir:      dir,
		out:      &outbox{},
		deleteCh: make(chan struct{}),
		stopCh:   make(chan struct{}),
		updated:  make(chan struct{}, 1),
		status:   provider.StatusProvisioning,
		message:  "starting",
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

// current returns the spec to run and its generation.
func (in *instance) current() (spec, int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.spec, in.gen
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

// setPID records the running process, 0 for none.
func (in *instance) setPID(pid int) {
	in.mu.Lock()
	in.pid = pid
	in.mu.Unlock()
}

// requestDelete marks the instance DELETING and tells its supervisor.
// Idempotent.
func (in *instance) requestDelete() {
	in.set(provider.StatusDeleting, "stopping")
	in.deleteOnce.Do(func() { close(in.deleteCh) })
}

// requestStop tells the supervisor the provider is stopping. Idempotent.
func (in *instance) requestStop() {
	in.stopOnce.Do(func() { close(in.stopCh) })
}

// ending reports, without blocking, whether a delete or a stop was requested.
func (in *instance) ending() bool {
	select {
	case <-in.deleteCh:
		return true
	case <-in.stopCh:
		return true
	default:
		return false
	}
}
