package adapter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// situation is which row of the decision matrix (package doc) a reconcile
// ended in; post starts from that row's conditions.
type situation int

const (
	sitApplied situation = iota
	sitSkipped
	sitApplyFailed
	sitDeleting
	sitDeleted
	sitInvalidDeletion
	sitDeletionFailed
	sitExecutionFailed
)

func (s situation) String() string {
	return [...]string{"applied", "skipped", "apply_failed", "deleting", "deleted", "invalid_deletion",
		"deletion_failed", "execution_failed"}[s]
}

// failed reports whether the situation is a failure (Health=False).
func (s situation) failed() bool {
	switch s {
	case sitApplyFailed, sitInvalidDeletion, sitDeletionFailed, sitExecutionFailed:
		return true
	}
	return false
}

// errOrderGone is what a phase returns when the API answered 404 for the
// order itself: nothing is left to reconcile or report to.
var errOrderGone = errors.New("order is gone")

// Phases, as adapter.error.phase names them.
const (
	phaseParams        = "params"
	phasePreconditions = "preconditions"
	phaseWhenDeleting  = "when_deleting"
	phaseResources     = "resources"
	phasePost          = "post"
)

// stepError is a terminal failure of one step (a param, a precondition, a
// resource), reported as ExecutionFailed.
type stepError struct {
	phase, step string
	err         error
}

func (e *stepError) Error() string {
	if e.step == "" {
		return fmt.Sprintf("%s: %v", e.phase, e.err)
	}
	return fmt.Sprintf("%s %s: %v", e.phase, e.step, e.err)
}

func (e *stepError) Unwrap() error { return e.err }

// run is the state of one Execute.
type run struct {
	e    *Executor
	in   eventInfo
	now  time.Time
	vars map[string]any // params and captures by name
	mode string

	sit     situation
	message string     // the situation's detail, for the conditions' messages
	failure *stepError // the first failure, for adapter.error
	skip    string     // why the preconditions were not met
	// invalidReason is InvalidDeletionOrder or InvalidDeletionConfig.
	invalidReason string

	// found holds each discovered resource's objects by name; a name
	// without an entry could not be discovered (its templates did not
	// render), an empty entry is a resource that does not exist.
	found map[string][]unstructured.Unstructured
}

func newRun(e *Executor, in eventInfo) *run {
	return &run{e: e, in: in, now: e.deps.Now(), vars: map[string]any{}, mode: ModeCreate,
		found: map[string][]unstructured.Unstructured{}}
}

// reconcile runs every phase before post. It returns only errOrderGone
// or a transient error; every other failure is recorded in r for post.
func (r *run) reconcile(ctx context.Context) error {
	if err := r.resolveParams(ctx); err != nil {
		return r.stop(ctx, err)
	}
	met, err := r.checkPreconditions(ctx)
	if err != nil {
		return r.stop(ctx, err)
	}
	if err := r.decideMode(ctx, met); err != nil {
		return r.stop(ctx, err)
	}
	if !met {
		r.sit = sitSkipped
		return r.discoverAll(ctx, false)
	}
	if r.mode == ModeDelete {
		return r.deleteResources(ctx)
	}
	return r.applyResources(ctx)
}

// stop ends the reconcile after a failure before the resources phase: a
// gone order or a transient error passes through, a step failure is
// recorded, and the resources are discovered for Applied.
func (r *run) stop(ctx context.Context, err error) error {
	if errors.Is(err, errOrderGone) || isTransient(err) {
		return err
	}
	r.fail(sitExecutionFailed, err)
	return r.discoverAll(ctx, false)
}

// fail records a failure; the first one wins, as it caused the rest.
func (r *run) fail(sit situation, err error) {
	if r.failure != nil {
		return
	}
	r.sit = sit
	se, ok := errors.AsType[*stepError](err)
	if !ok {
		se = &stepError{phase: phaseResources, err: err}
	}
	r.failure = se
	r.message = se.Error()
}

// decideMode evaluates when_deleting. When the preconditions were not met
// it still tries, so that post sees the mode, but a failure then is not
// one (a capture it reads may never have been taken) and leaves create.
func (r *run) decideMode(ctx context.Context, met bool) error {
	prg := r.e.prog.whenDeleting
	if prg == nil {
		if r.in.deleting {
			r.mode = ModeDelete
		}
		return nil
	}
	deleting, err := evalBool(ctx, prg, r.celVars())
	if err != nil {
		if !met || isTransient(err) {
			return nil
		}
		return &stepError{phase: phaseWhenDeleting, err: err}
	}
	if deleting {
		r.mode = ModeDelete
	}
	return nil
}

// celVars is the activation of the expressions before post: params,
// captures (null when not set), event and now.
func (r *run) celVars() map[string]any {
	vars := make(map[string]any, len(r.e.prog.names)+2)
	for _, n := range r.e.prog.names {
		vars[n] = nil
	}
	for k, v := range r.vars {
		vars[k] = v
	}
	vars[varEvent] = r.in.data
	vars[varNow] = r.now
	return vars
}

// templateData is what templates read: params, captures and event. A nil
// value renders as "" rather than text/template's "<no value>".
func (r *run) templateData() map[string]any {
	data := make(map[string]any, len(r.vars)+1)
	for k, v := range r.vars {
		if v == nil {
			v = ""
		}
		data[k] = v
	}
	data[varEvent] = r.in.data
	return data
}
