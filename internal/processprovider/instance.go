package processprovider

import (
	"sync"

	"github.com/stewardhq/steward/pkg/provider"
)

// instance is one supervised instance. Its supervisor goroutine owns the
// process; Create, Delete, Get and Stop talk to it only through the fields
// below.
type instance struct {
	id   string
	spec spec
	// dir is WorkDir/<id>: the process's working directory and log files.
	dir string
	out *outbox

	// deleteCh is closed by Delete, stopCh by Stop; the supervisor selects
	// on both.
	deleteCh   chan struct{}
	deleteOnce sync.Once
	stopCh     chan struct{}
	stopOnce   sync.Once

	mu      sync.Mutex
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
		status:   provider.StatusProvisioning,
		message:  "starting",
	}
}

// snapshot is the instance as Get answers it.
func (in *instance) snapshot() provider.Instance {
	in.mu.Lock()
	defer in.mu.Unlock()
	return provider.Instance{InstanceID: in.id, Status: in.status, Message: in.message}
}

// set records a status and message and reports whether the status changed.
// Once DELETING, only DELETED is accepted: a process that exits on its own
// while being deleted must not flip the instance to FAILED on its way out.
func (in *instance) set(s provider.Status, msg string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
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
