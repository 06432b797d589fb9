package processprovider

import (
	"context"
	"fmt"
	"slices"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/pkg/provider"
)

var _ provider.Repairer = (*Provider)(nil)

// The deterministic error codes of a failed repair operation.
const (
	// RepairCodeUnsupportedAction: the action is not repair, reconcile or restart.
	RepairCodeUnsupportedAction = "UNSUPPORTED_ACTION"
	// RepairCodeUnsupportedScope: the scope is not whole_runtime, control_plane or member.
	RepairCodeUnsupportedScope = "UNSUPPORTED_SCOPE"
	// RepairCodeMemberNotFound: scope member without a target, or a target
	// (a server, for control_plane) the instance does not have.
	RepairCodeMemberNotFound = "MEMBER_NOT_FOUND"
	// RepairCodeComponentNotFound: a component_key other than "server"; a
	// process runtime has no other component.
	RepairCodeComponentNotFound = "COMPONENT_NOT_FOUND"
	// RepairCodeMemberRestartFailed: a member's process could not be started.
	RepairCodeMemberRestartFailed = "MEMBER_RESTART_FAILED"
	// RepairCodeMemberUnhealthyAfterRepair: a member in scope did not run
	// once the repair had settled.
	RepairCodeMemberUnhealthyAfterRepair = "MEMBER_UNHEALTHY_AFTER_REPAIR"
	// RepairCodeEndpointWriteFailed: endpoint.json could not be written.
	RepairCodeEndpointWriteFailed = "ENDPOINT_WRITE_FAILED"
	// RepairCodeInstanceUnavailable: the instance is being deleted.
	RepairCodeInstanceUnavailable = "INSTANCE_UNAVAILABLE"
	// RepairCodeProviderStopped: the provider stopped during the operation.
	RepairCodeProviderStopped = "PROVIDER_STOPPED"
)

// maxRememberedRepairs bounds the finished operations an instance keeps,
// so that a redelivery of a recent one starts nothing.
const maxRememberedRepairs = 32

// Repair starts repair operation req on its instance in the background and
// returns at once, with status running; the operation reports its steps
// through Config.Runtime (see doc.go, Repair). An instance without
// spec.members is repaired as one member, "main", a server.
//
// It is idempotent by OperationID: a redelivery of an operation the
// instance runs or ran starts nothing and answers its status now; its
// Token is used for the operation's later reports, and a finished
// operation's final report is sent again with it, in case the first was
// lost. It returns [provider.ErrNotFound] for an instance it does not hold,
// a [*RequestError] without an operation id, [ErrRepairInProgress] (HTTP
// 409, REPAIR_IN_PROGRESS) while another operation runs on the instance,
// [ErrDeleting] (HTTP 409) for an instance being deleted, and [ErrStopped]
// after Stop.
func (p *Provider) Repair(ctx context.Context, req provider.RepairRequest) (provider.RepairAccepted, error) {
	if req.OperationID == "" {
		return provider.RepairAccepted{}, &RequestError{Invalid: invalid.New("operation_id", "is required")}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return provider.RepairAccepted{}, ErrStopped
	}
	in, ok := p.instances[req.InstanceID]
	if !ok {
		return provider.RepairAccepted{}, provider.ErrNotFound
	}
	op, isNew, err := in.admitRepair(req)
	if err != nil {
		return provider.RepairAccepted{}, err
	}
	if isNew {
		p.operations.Go(func() { p.execute(op) })
		p.logger.InfoContext(ctx, "repair started", "instance_id", in.id, "operation_id", op.id,
			"action", req.Action, "scope", req.Scope, "target_member_id", req.TargetMemberID)
		// Not op's status now: a quick operation may have ended already,
		// and its reports say so.
		return provider.RepairAccepted{OperationID: op.id, Status: provider.RepairRunning}, nil
	}
	if op.redeliver(req.Token) {
		// Under p.mu with the provider not stopped, as put requires.
		p.publishRepair(op)
	}
	return provider.RepairAccepted{OperationID: op.id, Status: op.currentStatus()}, nil
}

// repairBook is an instance's repair operations, guarded by the instance's
// mu: the one running, and the latest ones by id.
type repairBook struct {
	byID map[string]*operation
	// order holds the ids of byID, oldest first.
	order   []string
	running *operation
}

// admitRepair returns the operation req names: the one the instance
// already has (isNew false), or a new one, running from now on, unless
// another runs or the instance is being deleted.
func (in *instance) admitRepair(req provider.RepairRequest) (op *operation, isNew bool, err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	b := &in.repairs
	if op := b.byID[req.OperationID]; op != nil {
		return op, false, nil
	}
	switch {
	case b.running != nil:
		return nil, false, conflictError{reason: "REPAIR_IN_PROGRESS",
			error: fmt.Errorf("%w: operation %s runs on instance %s", ErrRepairInProgress, b.running.id, in.id)}
	case in.status == provider.StatusDeleting:
		return nil, false, conflictError{error: ErrDeleting}
	}
	op = newOperation(in, req)
	if b.byID == nil {
		b.byID = map[string]*operation{}
	}
	b.byID[op.id] = op
	b.order = append(b.order, op.id)
	if len(b.order) > maxRememberedRepairs {
		// The oldest is finished: only the newest runs.
		delete(b.byID, b.order[0])
		b.order = slices.Delete(b.order, 0, 1)
	}
	b.running = op
	return op, true, nil
}

// finishRepair lets the instance run another operation after op.
func (in *instance) finishRepair(op *operation) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.repairs.running == op {
		in.repairs.running = nil
	}
}

// publishRepair queues op's report as it is now; its sender reports with
// the newest token op was delivered with.
func (p *Provider) publishRepair(op *operation) {
	if p.cfg.Runtime == nil {
		return
	}
	r := op.report()
	p.put(op.out, "repair report", p.logger.With("instance_id", op.in.id, "operation_id", op.id),
		func(ctx context.Context) error { return p.cfg.Runtime.ReportRepair(ctx, op.request(), r) })
}
