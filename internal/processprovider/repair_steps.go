package processprovider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// stepResult is how a step ended.
type stepResult struct {
	status  string
	message string
	// err is set for status failed: the operation's error.
	err *provider.RepairError
}

// stepSucceeded, stepSkipped and stepFailed build a step's result with a
// formatted message; a failure's message is the operation's error too.
func stepSucceeded(format string, args ...any) stepResult {
	return stepResult{status: provider.RepairSucceeded, message: fmt.Sprintf(format, args...)}
}

func stepSkipped(format string, args ...any) stepResult {
	return stepResult{status: provider.RepairSkipped, message: fmt.Sprintf(format, args...)}
}

func stepFailed(code, format string, args ...any) stepResult {
	msg := fmt.Sprintf(format, args...)
	return stepResult{status: provider.RepairFailed, message: msg, err: &provider.RepairError{Code: code, Message: msg}}
}

// repairRun is what one operation's steps share while it executes.
type repairRun struct {
	p   *Provider
	in  *instance
	req provider.RepairRequest
	// scope are the ids of the members the operation applies to, once
	// precheck has chosen them.
	scope []string
	// restarted are the members service_reconcile started anew.
	restarted []string
}

// execute runs op's steps in the seed's order, reporting each change of a
// step, then finishes op with the runtime state. After a failed step the
// rest are skipped, except report_status, which always runs.
func (p *Provider) execute(op *operation) {
	r := &repairRun{p: p, in: op.in, req: op.request()}
	steps := []func(context.Context) stepResult{
		r.precheck, r.discoverState, r.checkHealth, r.reconcileServices,
		r.reconcileCertificates, r.reconcileEndpoint, r.checkHealthAfter, r.reportStatus,
	}
	ctx := p.repairCtx
	var failure *provider.RepairError
	for i, step := range steps {
		last := i == len(steps)-1
		if failure != nil && !last {
			op.skip(i, "preceding step failed")
			p.publishRepair(op)
			continue
		}
		op.begin(i, p.cfg.Now())
		p.publishRepair(op)
		var res stepResult
		if ctx.Err() != nil && !last {
			res = stepFailed(RepairCodeProviderStopped, "the provider stopped during the operation")
		} else {
			res = step(ctx)
		}
		op.end(i, res, p.cfg.Now())
		if res.err != nil && failure == nil {
			failure = res.err
		}
		if !last {
			p.publishRepair(op) // the last change goes with the final report
		}
	}
	op.in.mu.Lock()
	state := op.in.currentRuntimeLocked()
	op.in.mu.Unlock()
	op.finish(failure, state)
	op.in.finishRepair(op) // before the final report: who reads it may repair again
	p.publishRepair(op)
	p.logger.Info("repair finished", "instance_id", op.in.id, "operation_id", op.id, "status", op.currentStatus())
}

// precheck checks the action and the instance, and chooses the members in
// scope.
func (r *repairRun) precheck(context.Context) stepResult {
	switch r.req.Action {
	case provider.RepairActionRepair, provider.RepairActionReconcile, provider.RepairActionRestart:
	default:
		return stepFailed(RepairCodeUnsupportedAction, "action %q: want repair, reconcile or restart", r.req.Action)
	}
	if r.in.deleting() {
		return stepFailed(RepairCodeInstanceUnavailable, "the instance is being deleted")
	}
	scope, err := repairScope(r.req, r.in.views())
	if err != nil {
		return stepResult{status: provider.RepairFailed, message: err.Message, err: err}
	}
	r.scope = scope
	return stepSucceeded("%s of %s: members %s", r.req.Action, r.req.Scope, strings.Join(scope, ", "))
}

// discoverState looks at every member's process, whether its supervisor
// thinks it runs or not.
func (r *repairRun) discoverState(context.Context) stepResult {
	views := r.in.views()
	if r.p.cfg.NoOp {
		return stepSucceeded("no-op mode: %d members, no processes", len(views))
	}
	var running, down []string
	for _, v := range views {
		if v.pid != 0 && processAlive(v.pid) {
			running = append(running, fmt.Sprintf("%s (pid %d)", v.id, v.pid))
		} else {
			down = append(down, v.id)
		}
	}
	msg := fmt.Sprintf("%d of %d members run", len(running), len(views))
	if len(running) > 0 {
		msg += ": " + strings.Join(running, ", ")
	}
	if len(down) > 0 {
		msg += "; not running: " + strings.Join(down, ", ")
	}
	return stepSucceeded("%s", msg)
}

// checkHealth names the failed members in scope. Failed members are what
// a repair is for, so the step succeeds either way.
func (r *repairRun) checkHealth(context.Context) stepResult {
	bad := r.failedInScope(r.in.views())
	if len(bad) == 0 {
		return stepSucceeded("all %d members in scope are healthy", len(r.scope))
	}
	return stepSucceeded("%d of %d members in scope failed: %s", len(bad), len(r.scope), strings.Join(bad, "; "))
}

// reconcileServices restarts members: for repair the failed ones in scope,
// for restart every one in scope, one after the other. Reconcile restarts
// nothing.
func (r *repairRun) reconcileServices(ctx context.Context) stepResult {
	switch {
	case r.p.cfg.NoOp:
		return stepSkipped("no-op mode: no processes to restart")
	case r.req.Action == provider.RepairActionReconcile:
		return stepSkipped("reconcile is non-destructive: no member is restarted")
	}
	onlyFailed := r.req.Action == provider.RepairActionRepair
	var done []string
	for _, id := range r.scope {
		res := r.restart(ctx, id, onlyFailed)
		if res.failure != nil {
			return *res.failure
		}
		if res.restarted {
			r.restarted = append(r.restarted, id)
			done = append(done, fmt.Sprintf("%s (pid %d)", id, r.in.memberPID(id)))
		}
	}
	if len(done) == 0 {
		return stepSucceeded("no member in scope had failed: nothing restarted")
	}
	return stepSucceeded("restarted %s", strings.Join(done, ", "))
}

// restartOutcome is the outcome of one member's restart: failure is the
// failed step when it could not be done.
type restartOutcome struct {
	restarted bool
	failure   *stepResult
}

// restart asks the instance's supervisor to restart member id.
func (r *repairRun) restart(ctx context.Context, id string, onlyFailed bool) restartOutcome {
	reply := make(chan restartResult, 1)
	select {
	case r.in.restarts <- restartRequest{memberID: id, onlyFailed: onlyFailed, reply: reply}:
	case <-r.in.gone:
		res := stepFailed(RepairCodeInstanceUnavailable, "the instance was deleted before member %s was restarted", id)
		return restartOutcome{failure: &res}
	case <-ctx.Done():
		res := stepFailed(RepairCodeProviderStopped, "the provider stopped before member %s was restarted", id)
		return restartOutcome{failure: &res}
	}
	// The supervisor answers every request it takes.
	got := <-reply
	if got.err != nil {
		res := stepFailed(RepairCodeMemberRestartFailed, "member %s: %v", id, got.err)
		return restartOutcome{failure: &res}
	}
	return restartOutcome{restarted: got.restarted}
}

// reconcileCertificates has nothing to do: processes have no certificates
// or kubeconfig of the provider's making.
func (r *repairRun) reconcileCertificates(context.Context) stepResult {
	return stepSkipped("not applicable to process runtimes")
}

// reconcileEndpoint re-delivers the endpoint metadata: endpoint.json in the
// instance's directory.
func (r *repairRun) reconcileEndpoint(context.Context) stepResult {
	switch {
	case r.p.cfg.NoOp:
		return stepSkipped("no-op mode: no work directory")
	case r.in.deleting():
		return stepFailed(RepairCodeInstanceUnavailable, "the instance is being deleted")
	}
	name, err := writeEndpoint(r.in.dir, r.in.id, r.in.views(), r.p.cfg.Now())
	if err != nil {
		return stepFailed(RepairCodeEndpointWriteFailed, "%v", err)
	}
	return stepSucceeded("endpoint metadata written to %s", name)
}

// checkHealthAfter checks, after RepairSettle if members were restarted,
// that the members in scope run. A repair or restart fails if one does
// not; a reconcile, which restarts nothing, only says so.
func (r *repairRun) checkHealthAfter(ctx context.Context) stepResult {
	if r.p.cfg.NoOp {
		return stepSkipped("no-op mode: no processes")
	}
	if len(r.restarted) > 0 {
		timer := time.NewTimer(r.p.cfg.RepairSettle)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return stepFailed(RepairCodeProviderStopped, "the provider stopped during the operation")
		}
	}
	var down []string
	for _, v := range r.inScope(r.in.views()) {
		if v.failed || v.pid == 0 || !processAlive(v.pid) {
			down = append(down, fmt.Sprintf("%s (%s)", v.id, v.message))
		}
	}
	switch {
	case len(down) == 0:
		return stepSucceeded("all %d members in scope run", len(r.scope))
	case r.req.Action == provider.RepairActionReconcile:
		return stepSucceeded("not running, and left so by reconcile: %s", strings.Join(down, "; "))
	}
	return stepFailed(RepairCodeMemberUnhealthyAfterRepair, "not running after the %s: %s", r.req.Action, strings.Join(down, "; "))
}

// reportStatus sends Steward the runtime state now, for an instance that
// reports its runtime at all.
func (r *repairRun) reportStatus(context.Context) stepResult {
	in := r.in
	in.mu.Lock()
	defer in.mu.Unlock()
	switch {
	case !in.hasMembersLocked():
		return stepSucceeded("an instance without members reports no runtime; the state is in this operation's report")
	case !r.p.reportsRuntime(in):
		return stepSucceeded("no runtime reporter or order metadata; the state is in this operation's report")
	case in.status == provider.StatusDeleting || in.status == provider.StatusDeleted:
		return stepSucceeded("the instance is being deleted; no runtime report")
	}
	st := in.currentRuntimeLocked()
	in.lastRuntime = runtimeKey(st)
	r.p.queueRuntimeLocked(in, st)
	return stepSucceeded("runtime reported: %s", st.Health)
}

// inScope returns the views of the members in scope.
func (r *repairRun) inScope(views []memberView) []memberView {
	var out []memberView
	for _, v := range views {
		for _, id := range r.scope {
			if v.id == id {
				out = append(out, v)
			}
		}
	}
	return out
}

// failedInScope describes the failed members in scope.
func (r *repairRun) failedInScope(views []memberView) []string {
	var bad []string
	for _, v := range r.inScope(views) {
		if v.failed {
			bad = append(bad, fmt.Sprintf("%s (%s)", v.id, v.message))
		}
	}
	return bad
}
