package kubeprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stewardhq/steward/pkg/provider"
)

// The deterministic error codes of a failed repair operation.
const (
	// RepairCodeUnsupported: an action or scope a container app has not
	// (it has no members: the scope is the whole runtime).
	RepairCodeUnsupported = "UNSUPPORTED_ACTION"
	// RepairCodeInstanceUnavailable: the app's namespace or Deployment is
	// gone or being deleted.
	RepairCodeInstanceUnavailable = "INSTANCE_UNAVAILABLE"
	// RepairCodeApplyFailed: the spec could not be applied again, or the
	// restart could not be written.
	RepairCodeApplyFailed = "APPLY_FAILED"
	// RepairCodeUnhealthyAfterRepair: the app did not run with every
	// replica ready within the repair timeout.
	RepairCodeUnhealthyAfterRepair = "UNHEALTHY_AFTER_REPAIR"
	// RepairCodeProviderStopped: the provider stopped during the operation.
	RepairCodeProviderStopped = "PROVIDER_STOPPED"
)

// annotationRestartedBy, on the pod template, names the repair operation
// that last restarted the app: a redelivered restart finds it and does not
// restart again, even after the provider restarted.
const annotationRestartedBy = "steward.dev/restarted-by"

// restartFieldManager owns the restart annotations, so that applying the
// spec again (under FieldManager) leaves them, and with them the pods, as
// they are.
const restartFieldManager = "steward-kubernetes-provider-restart"

// maxRememberedRepairs bounds the finished operations kept, so that a
// redelivery of a recent one starts nothing.
const maxRememberedRepairs = 256

// repairs are the provider's repair operations: those running and the
// latest finished ones, by operation id.
type repairs struct {
	p      *Provider
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	ops     map[string]*repairOp
	order   []string
	running map[string]string // instance id → operation id
}

// repairOp is one operation and what it reported last.
type repairOp struct {
	req    provider.RepairRequest
	report provider.RepairReport
	done   bool
}

func newRepairs(p *Provider) *repairs {
	ctx, cancel := context.WithCancel(context.Background())
	return &repairs{p: p, ctx: ctx, cancel: cancel, ops: map[string]*repairOp{}, running: map[string]string{}}
}

// wait ends the operations under way (each reports PROVIDER_STOPPED) and
// waits for them.
func (r *repairs) wait() {
	r.cancel()
	r.wg.Wait()
}

// Repair starts the operation in the background and answers running; its
// steps are reported through Config.Reporter. restart is a rollout
// restart (new pods, one ReplicaSet more); reconcile applies the spec
// again; repair applies it and restarts the app unless every replica is
// ready. It is idempotent by operation id: a redelivery starts nothing,
// takes the new token and reports the operation's state again. Another
// operation running on the app is a 409 (REPAIR_IN_PROGRESS).
func (p *Provider) Repair(_ context.Context, req provider.RepairRequest) (provider.RepairAccepted, error) {
	if req.OperationID == "" {
		return provider.RepairAccepted{}, requestError("INVALID_ARGUMENT", fmt.Errorf("operation_id is required"))
	}
	ns, err := p.watch.namespace(req.InstanceID)
	switch {
	case apierrors.IsNotFound(err):
		return provider.RepairAccepted{}, provider.ErrNotFound
	case err != nil:
		return provider.RepairAccepted{}, err
	case ns.DeletionTimestamp != nil:
		return provider.RepairAccepted{}, &provider.HTTPError{Code: http.StatusConflict, Reason: "INSTANCE_DELETING",
			Message: fmt.Sprintf("instance %s is being deleted", req.InstanceID)}
	}
	return p.repairs.admit(req)
}

func (r *repairs) admit(req provider.RepairRequest) (provider.RepairAccepted, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if op := r.ops[req.OperationID]; op != nil {
		op.req.Token = req.Token
		if op.done {
			// The final report may have been lost: send it again.
			final := op.report
			r.wg.Go(func() { r.send(op.req, final) })
		}
		return provider.RepairAccepted{OperationID: req.OperationID, Status: op.report.Status}, nil
	}
	if other := r.running[req.InstanceID]; other != "" {
		return provider.RepairAccepted{}, &provider.HTTPError{Code: http.StatusConflict, Reason: "REPAIR_IN_PROGRESS",
			Message: fmt.Sprintf("operation %s runs on instance %s", other, req.InstanceID)}
	}
	op := &repairOp{req: req, report: provider.RepairReport{Status: provider.RepairRunning}}
	for _, name := range provider.RepairStepNames {
		op.report.Steps = append(op.report.Steps, provider.RepairStep{Name: name, Status: provider.RepairPending})
	}
	r.ops[req.OperationID] = op
	r.order = append(r.order, req.OperationID)
	r.forgetOldLocked()
	r.running[req.InstanceID] = req.OperationID
	r.wg.Go(func() { r.run(op) })
	r.p.log.Info("repair started", "instance_id", req.InstanceID, "operation_id", req.OperationID, "action", req.Action)
	return provider.RepairAccepted{OperationID: req.OperationID, Status: provider.RepairRunning}, nil
}

// forgetOldLocked drops the oldest finished operations beyond the bound.
func (r *repairs) forgetOldLocked() {
	for len(r.order) > maxRememberedRepairs {
		i := slices.IndexFunc(r.order, func(id string) bool { return r.ops[id].done })
		if i < 0 {
			return
		}
		delete(r.ops, r.order[i])
		r.order = slices.Delete(r.order, i, i+1)
	}
}

// send reports the operation's state with its newest token; a report that
// cannot be sent is logged (Steward redelivers an operation it hears
// nothing of, and the redelivery sends the state again).
func (r *repairs) send(req provider.RepairRequest, report provider.RepairReport) {
	if r.p.cfg.Reporter == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), 30*time.Second)
	defer cancel()
	if err := r.p.cfg.Reporter.ReportRepair(ctx, req, report); err != nil {
		r.p.log.Warn("report a repair", "operation_id", req.OperationID, "status", report.Status, "error", err)
	}
}

// repairRun is one execution of an operation.
type repairRun struct {
	r  *repairs
	op *repairOp
}

// run executes the operation's steps in order, reporting each.
func (r *repairs) run(op *repairOp) {
	rr := &repairRun{r: r, op: op}
	health := rr.execute()
	r.mu.Lock()
	if op.report.Status == provider.RepairRunning {
		op.report.Status = provider.RepairSucceeded
	}
	op.report.RuntimeState = health
	op.done = true
	delete(r.running, op.req.InstanceID)
	final, req := op.report, op.req
	r.mu.Unlock()
	r.send(req, final)
	r.p.watch.enqueue(req.InstanceID)
	r.p.log.Info("repair finished", "instance_id", req.InstanceID, "operation_id", req.OperationID, "status", final.Status)
}

// stepResult is what a step came to.
type stepResult struct {
	status, message string
	fail            *provider.RepairError
}

func succeeded(format string, args ...any) stepResult {
	return stepResult{status: provider.RepairSucceeded, message: fmt.Sprintf(format, args...)}
}

func skipped(format string, args ...any) stepResult {
	return stepResult{status: provider.RepairSkipped, message: fmt.Sprintf(format, args...)}
}

func failed(code, format string, args ...any) stepResult {
	msg := fmt.Sprintf(format, args...)
	return stepResult{status: provider.RepairFailed, message: msg, fail: &provider.RepairError{Code: code, Message: msg}}
}

// step runs one step and reports its start and its end; false when it
// failed (the operation then fails and the steps after it are skipped).
func (rr *repairRun) step(name string, fn func(ctx context.Context) stepResult) bool {
	started := time.Now().UTC()
	rr.setStep(name, provider.RepairStep{Name: name, Status: provider.RepairRunning, StartedAt: &started}, nil)
	res := stepResult{}
	if rr.r.ctx.Err() != nil {
		res = failed(RepairCodeProviderStopped, "the provider stopped")
	} else {
		res = fn(rr.r.ctx)
	}
	finished := time.Now().UTC()
	rr.setStep(name, provider.RepairStep{Name: name, Status: res.status, Message: res.message, StartedAt: &started,
		FinishedAt: &finished}, res.fail)
	return res.fail == nil
}

// setStep records a step's progress (and the operation's failure) and
// reports it.
func (rr *repairRun) setStep(name string, s provider.RepairStep, fail *provider.RepairError) {
	r := rr.r
	r.mu.Lock()
	op := rr.op
	for i := range op.report.Steps {
		if op.report.Steps[i].Name == name {
			op.report.Steps[i] = s
		}
	}
	if fail != nil {
		op.report.Status, op.report.Error = provider.RepairFailed, fail
		for i := range op.report.Steps {
			if op.report.Steps[i].Status == provider.RepairPending {
				op.report.Steps[i].Status, op.report.Steps[i].Message = provider.RepairSkipped, "an earlier step failed"
			}
		}
	}
	report, req := op.report, op.req
	report.Steps = slices.Clone(report.Steps)
	r.mu.Unlock()
	if fail == nil { // a failure is reported once, as the final report
		r.send(req, report)
	}
}

// execute runs the seed's eight steps and returns the runtime's health at
// the end.
func (rr *repairRun) execute() *provider.RuntimeState {
	p, req := rr.r.p, rr.op.req
	id := req.InstanceID
	var before *appsv1.Deployment
	var st appState
	ok := rr.step(provider.StepPrecheck, func(context.Context) stepResult {
		switch {
		case !slices.Contains([]string{provider.RepairActionRepair, provider.RepairActionReconcile, provider.RepairActionRestart}, req.Action):
			return failed(RepairCodeUnsupported, "action %q: want repair, reconcile or restart", req.Action)
		case req.Scope != "" && req.Scope != provider.ScopeWholeRuntime:
			return failed(RepairCodeUnsupported, "scope %q: a container app is repaired as a whole (whole_runtime)", req.Scope)
		}
		st = p.watch.state(id)
		switch {
		case !st.exists || st.deleting:
			return failed(RepairCodeInstanceUnavailable, "namespace %s is gone or being deleted", Namespace(id))
		case st.spec == nil:
			return failed(RepairCodeInstanceUnavailable, "namespace %s keeps no spec to apply", Namespace(id))
		}
		return succeeded("namespace %s holds the app", Namespace(id))
	}) && rr.step(provider.StepRuntimeStateDiscovery, func(ctx context.Context) stepResult {
		d, err := p.getDeployment(ctx, id)
		if err != nil {
			return failed(RepairCodeInstanceUnavailable, "%v", err)
		}
		before = d
		if d == nil {
			return succeeded("deployment %s is missing: applying the spec makes it again", appName)
		}
		return succeeded("deployment %s: %d replicas wanted, %d ready, generation %d", appName, replicaCount(d),
			d.Status.ReadyReplicas, d.Generation)
	}) && rr.step(provider.StepMemberHealthCheck, func(context.Context) stepResult {
		return succeeded("%s", st.observed.Message)
	}) && rr.step(provider.StepServiceReconcile, func(ctx context.Context) stepResult {
		return rr.reconcile(ctx, st, before)
	}) && rr.step(provider.StepCertificateOrKubeconfig, func(context.Context) stepResult {
		return skipped("a container app has no certificates or kubeconfig of its own")
	}) && rr.step(provider.StepEndpointReconcile, func(context.Context) stepResult {
		if service(*st.spec, metav1.ObjectMeta{}) == nil {
			return skipped("the app exposes no service port")
		}
		return succeeded("service %s applied with the spec's ports", appName)
	}) && rr.step(provider.StepPostRepairHealthCheck, func(ctx context.Context) stepResult {
		return rr.waitHealthy(ctx)
	})
	if ok {
		rr.step(provider.StepReportStatus, func(context.Context) stepResult { return succeeded("reported") })
	}
	if rt, ok := runtimeOf(p.watch.state(id).observed); ok {
		return &rt
	}
	return nil
}

// reconcile applies the spec again and, for restart (or repair of an app
// not fully ready), restarts its pods.
func (rr *repairRun) reconcile(ctx context.Context, st appState, before *appsv1.Deployment) stepResult {
	p, req := rr.r.p, rr.op.req
	id := req.InstanceID
	unlock := p.locks.Lock(id)
	defer func() { unlock(); p.watch.enqueue(id) }()
	if err := p.apply(ctx, Order{OrderID: st.orderID, InstanceID: id, Project: st.project, Spec: *st.spec}, true); err != nil {
		return failed(RepairCodeApplyFailed, "apply the spec: %v", err)
	}
	restart := req.Action == provider.RepairActionRestart ||
		req.Action == provider.RepairActionRepair && (st.observed.Status != StatusRunning || st.observed.Degraded)
	if !restart {
		return succeeded("the spec is applied again; no pod restarted")
	}
	if before != nil && before.Spec.Template.Annotations[annotationRestartedBy] == req.OperationID {
		return succeeded("the pods were restarted by this operation already")
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{annotationRestartedBy: req.OperationID,
			"kubectl.kubernetes.io/restartedAt": time.Now().UTC().Format(time.RFC3339)}}}}})
	d, err := p.kube.AppsV1().Deployments(Namespace(id)).Patch(ctx, appName, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: restartFieldManager})
	if err != nil {
		return failed(RepairCodeApplyFailed, "restart deployment %s: %v", appName, err)
	}
	p.mu.Lock()
	p.applied[id] = d.Generation
	p.mu.Unlock()
	return succeeded("the spec is applied again and the pods restarted (deployment generation %d)", d.Generation)
}

// waitHealthy waits until the app has rolled out with every replica
// ready, or fails when it cannot (FAILED) or the repair timeout passes.
func (rr *repairRun) waitHealthy(ctx context.Context) stepResult {
	p, id := rr.r.p, rr.op.req.InstanceID
	ctx, cancel := context.WithTimeout(ctx, p.cfg.RepairTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond) // reads the informers' cache, not the API server
	defer tick.Stop()
	for {
		o := p.watch.state(id).observed
		switch {
		case o.Status == StatusRunning && !o.Degraded:
			return succeeded("%s", o.Message)
		case o.Status == StatusFailed:
			return failed(RepairCodeUnhealthyAfterRepair, "%s", o.Message)
		}
		select {
		case <-ctx.Done():
			if rr.r.ctx.Err() != nil {
				return failed(RepairCodeProviderStopped, "the provider stopped")
			}
			return failed(RepairCodeUnhealthyAfterRepair, "not healthy within %s: %s", p.cfg.RepairTimeout, o.Message)
		case <-tick.C:
		}
	}
}
