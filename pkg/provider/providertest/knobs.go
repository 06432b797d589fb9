package providertest

import (
	"context"
	"errors"
	"reflect"

	"github.com/stewardhq/steward/pkg/provider"
)

// FailCreate makes every create from now on answer status with body
// verbatim (as application/json when it is JSON; a problem when it is
// empty), creating nothing, until [Server.SucceedCreates]. The calls are
// still recorded.
func (s *Server) FailCreate(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failCreate = &failure{knob: "FailCreate", status: status, body: body}
}

// SucceedCreates undoes [Server.FailCreate].
func (s *Server) SucceedCreates() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failCreate = nil
}

// FailUpdate makes every update from now on answer status with body as
// [Server.FailCreate] does, changing nothing, until [Server.SucceedUpdates].
// The calls are still recorded. It has no effect without [Config.Update]:
// such a server answers updates 405.
func (s *Server) FailUpdate(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failUpdate = &failure{knob: "FailUpdate", status: status, body: body}
}

// SucceedUpdates undoes [Server.FailUpdate].
func (s *Server) SucceedUpdates() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failUpdate = nil
}

// FailDeletes makes every delete from now on answer status (a problem with
// reason INJECTED_FAILURE), deleting nothing, until [Server.SucceedDeletes].
func (s *Server) FailDeletes(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failDeletes = status
}

// SucceedDeletes undoes [Server.FailDeletes].
func (s *Server) SucceedDeletes() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failDeletes = 0
}

// SlowDeletes makes every delete from now on answer DELETING and keep the
// instance (its status DELETING), as a provider whose deletion takes time:
// the test reports DELETED itself when it wants the deletion finished.
func (s *Server) SlowDeletes() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slowDeletes = true
}

// SetHealth sets whether the health check answers healthy or unhealthy
// (reachable, backend down). A new Server is healthy.
func (s *Server) SetHealth(healthy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unhealthy = !healthy
}

// GoDown makes every request from now on fail at the transport: the server
// closes the connection without answering, so a [provider.Client] sees
// [provider.ErrUnreachable]. Nothing is recorded while down. Requests
// already in flight finish.
func (s *Server) GoDown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = true
}

// ComeBack undoes [Server.GoDown]; the instances are still there.
func (s *Server) ComeBack() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = false
}

// BlockCreates makes every create from now on wait, after it is recorded,
// until [Server.UnblockCreates] or the test ends: a caller with a short
// timeout sees [provider.ErrTimeout]. A blocked create still takes effect
// when unblocked even if its caller gave up, as on a real provider whose
// answer was lost.
func (s *Server) BlockCreates() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unblock == nil {
		s.unblock = make(chan struct{})
	}
}

// UnblockCreates releases the creates held by [Server.BlockCreates] and
// stops holding new ones.
func (s *Server) UnblockCreates() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unblock != nil {
		close(s.unblock)
		s.unblock = nil
	}
}

// SetOutputs gives every instance the server holds out as its outputs,
// answered by reads of it, and makes the creates from now on answer with
// them; nil: none.
func (s *Server) SetOutputs(out provider.Outputs) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outputs = out
	for id, inst := range s.instances {
		inst.Outputs = out
		s.instances[id] = inst
	}
}

// memProvider is the in-memory Provider that New serves; its state lives
// in the Server, under the Server's mutex.
type memProvider struct{ s *Server }

var errClosed = errors.New("providertest: server closed")

func (m *memProvider) Create(_ context.Context, req provider.CreateRequest) (provider.Instance, error) {
	s := m.s
	s.mu.Lock()
	unblock := s.unblock
	s.mu.Unlock()
	if unblock != nil {
		// Not the request's ctx: see BlockCreates.
		select {
		case <-unblock:
		case <-s.closed:
			return provider.Instance{}, errClosed
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if inst, ok := s.instances[req.InstanceID]; ok {
		return inst, nil
	}
	inst := provider.Instance{InstanceID: req.InstanceID, Status: provider.StatusProvisioning, Outputs: s.outputs}
	s.instances[req.InstanceID] = inst
	s.specs[req.InstanceID] = req.Spec
	s.made[req.InstanceID] = true
	return inst, nil
}

func (m *memProvider) Get(_ context.Context, id string) (provider.Instance, error) {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	inst, ok := m.s.instances[id]
	if !ok {
		return provider.Instance{}, provider.ErrNotFound
	}
	return inst, nil
}

func (m *memProvider) Delete(_ context.Context, id string) (provider.Instance, error) {
	s := m.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failDeletes != 0 {
		return provider.Instance{}, &provider.HTTPError{Code: s.failDeletes, Reason: "INJECTED_FAILURE", Message: "providertest: FailDeletes"}
	}
	inst, ok := s.instances[id]
	if !ok {
		return provider.Instance{}, provider.ErrNotFound
	}
	if s.slowDeletes {
		inst.Status = provider.StatusDeleting
		s.instances[id] = inst
		return inst, nil
	}
	delete(s.instances, id)
	delete(s.specs, id)
	return provider.Instance{InstanceID: id, Status: provider.StatusDeleted}, nil
}

func (m *memProvider) Health(context.Context) error {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	if m.s.unhealthy {
		return errors.New("providertest: backend down (SetHealth(false))")
	}
	return nil
}

// updatingProvider is the memProvider with in-place updates, served when
// Config.Update is set; the memProvider alone is no [provider.Updater], so
// its server answers PUT with 405.
type updatingProvider struct{ *memProvider }

// Update sets the instance's spec and makes it PROVISIONING, as a provider
// that has started realising the new spec; [Server.Report] then plays its
// outcome. The spec it already has changes nothing.
func (u *updatingProvider) Update(_ context.Context, req provider.UpdateRequest) (provider.Instance, error) {
	s := u.s
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, ok := s.instances[req.InstanceID]
	if !ok {
		return provider.Instance{}, provider.ErrNotFound
	}
	if old := s.specs[req.InstanceID]; (len(old) == 0 && len(req.Spec) == 0) || reflect.DeepEqual(old, req.Spec) {
		return inst, nil
	}
	inst.Status = provider.StatusProvisioning
	s.instances[req.InstanceID] = inst
	s.specs[req.InstanceID] = req.Spec
	return inst, nil
}

// FailRepairs makes every repair call answer status (0 to accept again).
func (s *Server) FailRepairs(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failRepairs = status
}

// repairingProvider is the memProvider that accepts repair operations
// (Config.Repair).
type repairingProvider struct{ *memProvider }

// Repair accepts the operation of an instance it holds; the test reports
// on it as the worker would.
func (r *repairingProvider) Repair(_ context.Context, req provider.RepairRequest) (provider.RepairAccepted, error) {
	return r.repair(req)
}

// updatingRepairingProvider serves both updates and repairs.
type updatingRepairingProvider struct{ *updatingProvider }

// Repair is repairingProvider's.
func (u *updatingRepairingProvider) Repair(_ context.Context, req provider.RepairRequest) (provider.RepairAccepted, error) {
	return u.repair(req)
}

func (m *memProvider) repair(req provider.RepairRequest) (provider.RepairAccepted, error) {
	s := m.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failRepairs != 0 {
		return provider.RepairAccepted{}, &provider.HTTPError{Code: s.failRepairs, Reason: "INJECTED_FAILURE",
			Message: "providertest: FailRepairs"}
	}
	if _, ok := s.instances[req.InstanceID]; !ok {
		return provider.RepairAccepted{}, provider.ErrNotFound
	}
	return provider.RepairAccepted{OperationID: req.OperationID, Status: provider.RepairPending}, nil
}
