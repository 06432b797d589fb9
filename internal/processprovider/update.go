package processprovider

import (
	"context"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/pkg/provider"
)

var _ provider.Updater = (*Provider)(nil)

// Update changes the instance's spec in place and returns at once. With a
// new spec it answers PROVISIONING and reports it too; the supervisor then
// stops the old process group (SIGTERM, then SIGKILL after StopGrace) and
// starts the new command under the same instance id and work directory,
// whose log files go on appending, and reports RUNNING (or FAILED) for it as
// after Create. The restart streak starts again from zero, and a FAILED
// instance runs again. With spec.members every member is stopped and the
// new spec's members are started, whatever changed; an update may change
// the member list, but not add spec.members to an instance without it or
// remove it (a [*RequestError]: replace the instance instead).
//
// It is idempotent: a spec the instance has already, compared as the
// provider reads it (so ignored fields and spelled-out defaults do not
// count), restarts nothing and returns the instance as it is now. It returns
// [provider.ErrNotFound] for an id it does not hold, a [*RequestError]
// (HTTP 400) for an unusable spec, leaving the instance as it was,
// [ErrDeleting] (HTTP 409) for an instance being deleted, and [ErrStopped]
// after Stop. In no-op mode it starts nothing and reports RUNNING at once.
// It does not block on processes or reports.
func (p *Provider) Update(ctx context.Context, req provider.UpdateRequest) (provider.Instance, error) {
	p.mu.Lock()
	_, err := p.updatableLocked(req.InstanceID)
	p.mu.Unlock()
	if err != nil {
		return provider.Instance{}, err
	}
	s, err := p.readSpec(ctx, req.InstanceID, req.Spec)
	if err != nil {
		return provider.Instance{}, err
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	in, err := p.updatableLocked(req.InstanceID) // again: a Delete or Stop may have come
	if err != nil {
		return provider.Instance{}, err
	}
	answer, changed, err := p.respec(in, s)
	if err != nil || !changed {
		return answer, err
	}
	if p.cfg.NoOp {
		// Under p.mu, as in Create.
		p.setStatus(in, provider.StatusRunning, "no-op: nothing started")
	} else {
		in.wake()
	}
	p.logger.InfoContext(ctx, "instance updating", "instance_id", in.id, "noop", p.cfg.NoOp)
	return answer, nil
}

// updatableLocked returns the instance Update may change, or why there is
// none; the caller holds p.mu.
func (p *Provider) updatableLocked(id string) (*instance, error) {
	if p.stopped {
		return nil, ErrStopped
	}
	in, ok := p.instances[id]
	if !ok {
		return nil, provider.ErrNotFound
	}
	return in, nil
}

// respec makes s the instance's spec, with a new generation, and sets it
// PROVISIONING, unless s is its spec already; changed says which, and answer
// is the instance as Update answers it. The caller holds p.mu.
func (p *Provider) respec(in *instance, s spec) (answer provider.Instance, changed bool, err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	switch {
	case in.status == provider.StatusDeleting:
		return provider.Instance{}, false, conflictError{error: ErrDeleting}
	case in.spec.equal(s):
		return in.snapshotLocked(), false, nil
	case (len(in.spec.members) == 0) != (len(s.members) == 0):
		// Steward's runtime state of the order would outlive the members,
		// or start from nothing: a different kind of instance.
		return provider.Instance{}, false, &RequestError{Invalid: invalid.New("spec.members",
			"cannot be added to or removed from an instance by an update; replace the instance instead")}
	}
	in.setSpecLocked(s)
	p.recordLocked(in, provider.StatusProvisioning, "updating to the new spec")
	p.saveLocked(in)
	return in.snapshotLocked(), true, nil
}
