package adapter

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// post builds the report: the decision matrix's conditions for r.sit
// (package doc), then the config's overrides and data. It never fails: an
// override or data expression that does not evaluate keeps the default
// and turns Health False (ExecutionFailed, naming the field), so a broken
// post cannot report a healthy order.
func (r *run) post(ctx context.Context) *Report {
	conds := r.defaultConditions()
	vars := r.postVars()
	protectHealth := r.sit.failed()
	var failures []string
	for i, cp := range r.e.prog.conditions {
		if cp.typ == ConditionHealth && protectHealth {
			continue // a config cannot hide the executor's own failure
		}
		c := findCondition(&conds, cp.typ)
		field := fmt.Sprintf("post.conditions[%d]", i)
		for _, f := range []struct {
			name string
			v    valueProg
			dst  *string
		}{{"status", cp.status, &c.Status}, {"reason", cp.reason, &c.Reason}, {"message", cp.message, &c.Message}} {
			s, err := r.evalString(ctx, f.v, vars)
			switch {
			case err != nil:
				failures = append(failures, fmt.Sprintf("%s.%s: %v", field, f.name, err))
			case !f.v.set:
			case f.name == "status" && s != StatusTrue && s != StatusFalse && s != StatusUnknown:
				failures = append(failures, fmt.Sprintf("%s.status: %q, want True, False or Unknown", field, s))
			default:
				*f.dst = s
			}
		}
	}
	data := map[string]any{}
	for _, d := range r.e.prog.data {
		v, err := r.evalValue(ctx, d.value, vars)
		if err != nil {
			failures = append(failures, fmt.Sprintf("post.data.%s: %v", d.key, err))
			continue
		}
		data[d.key] = v
	}
	raw, err := json.Marshal(data)
	if err != nil {
		failures = append(failures, fmt.Sprintf("post.data: %v", err))
		raw = []byte("{}")
	}
	if len(failures) > 0 && !protectHealth {
		h := findCondition(&conds, ConditionHealth)
		h.Status, h.Reason = StatusFalse, ReasonExecutionFailed
		h.Message = phasePost + ": " + strings.Join(failures, "; ")
	}
	return &Report{
		ObservedGeneration: r.in.generation,
		ObservedTime:       r.now,
		Conditions:         conds,
		Data:               raw,
	}
}

// defaultConditions is the decision matrix of the package doc.
func (r *run) defaultConditions() []Condition {
	found := StatusFalse
	if r.anyFound() {
		found = StatusTrue
	}
	healthy := Condition{Type: ConditionHealth, Status: StatusTrue, Reason: ReasonHealthy, Message: "reconciled"}
	switch r.sit {
	case sitApplied:
		msg := "applied " + r.resourceNames()
		return []Condition{
			{ConditionApplied, StatusTrue, ReasonAppliedSuccessfully, msg},
			{ConditionAvailable, StatusTrue, ReasonResourcesCreated, msg},
			healthy,
		}
	case sitSkipped:
		return []Condition{
			{ConditionApplied, found, ReasonPreconditionsNotMet, r.foundMessage()},
			{ConditionAvailable, StatusFalse, ReasonPreconditionsNotMet, r.skip},
			healthy,
		}
	case sitDeleting:
		return []Condition{
			{ConditionApplied, StatusTrue, ReasonDeletionInProgress, r.message},
			{ConditionAvailable, StatusFalse, ReasonDeleting, r.message},
			healthy,
		}
	case sitDeleted:
		return []Condition{
			{ConditionApplied, StatusFalse, ReasonDeleted, r.message},
			{ConditionAvailable, StatusFalse, ReasonDeleted, r.message},
			healthy,
			{ConditionFinalized, StatusTrue, ReasonDeleted, r.message},
		}
	case sitInvalidDeletion:
		return []Condition{
			{ConditionApplied, StatusTrue, r.invalidReason, r.message},
			{ConditionAvailable, StatusFalse, ReasonDeleting, r.message},
			{ConditionHealth, StatusFalse, r.invalidReason, r.message},
		}
	case sitDeletionFailed:
		return []Condition{
			{ConditionApplied, StatusTrue, ReasonDeletionFailed, r.message},
			{ConditionAvailable, StatusFalse, ReasonDeleting, r.message},
			{ConditionHealth, StatusFalse, ReasonDeletionFailed, r.message},
		}
	case sitApplyFailed:
		return []Condition{
			{ConditionApplied, found, ReasonApplyFailed, r.foundMessage()},
			{ConditionAvailable, StatusFalse, ReasonApplyFailed, r.message},
			{ConditionHealth, StatusFalse, ReasonApplyFailed, r.message},
		}
	}
	return []Condition{ // sitExecutionFailed
		{ConditionApplied, found, ReasonExecutionFailed, r.foundMessage()},
		{ConditionAvailable, StatusFalse, ReasonExecutionFailed, r.message},
		{ConditionHealth, StatusFalse, ReasonExecutionFailed, r.message},
	}
}

// postVars is post's CEL activation: celVars plus resources (each
// discovered object by name; absent when not found) and adapter.
func (r *run) postVars() map[string]any {
	vars := r.celVars()
	resources := map[string]any{}
	for name, objs := range r.found {
		if len(objs) > 0 {
			resources[name] = objs[0].Object
		}
	}
	vars[varResources] = resources
	status := "success"
	switch {
	case r.sit.failed():
		status = "failed"
	case r.sit == sitSkipped:
		status = "skipped"
	}
	failure := map[string]any{"phase": "", "resource": "", "message": ""}
	if r.failure != nil {
		failure = map[string]any{"phase": r.failure.phase, "resource": r.failure.step, "message": r.failure.err.Error()}
	}
	vars[varAdapter] = map[string]any{
		"mode":              r.mode,
		"execution_status":  status,
		"resources_skipped": r.sit == sitSkipped || (r.failure != nil && r.failure.phase != phaseResources) || r.sit == sitInvalidDeletion,
		"skip_reason":       r.skip,
		"error":             failure,
	}
	return vars
}

func (r *run) evalValue(ctx context.Context, v valueProg, vars map[string]any) (any, error) {
	if v.expr == nil {
		return v.lit, nil
	}
	return evalCEL(ctx, v.expr, vars)
}

func (r *run) evalString(ctx context.Context, v valueProg, vars map[string]any) (string, error) {
	if !v.set {
		return "", nil
	}
	if v.expr == nil {
		s, _ := v.lit.(string)
		return s, nil
	}
	return evalString(ctx, v.expr, vars)
}

// findCondition returns conds' condition of type t, adding it (Unknown)
// when missing.
func findCondition(conds *[]Condition, t string) *Condition {
	for i := range *conds {
		if (*conds)[i].Type == t {
			return &(*conds)[i]
		}
	}
	*conds = append(*conds, Condition{Type: t, Status: StatusUnknown})
	return &(*conds)[len(*conds)-1]
}

func (r *run) resourceNames() string {
	names := make([]string, len(r.e.prog.resources))
	for i, rp := range r.e.prog.resources {
		names[i] = rp.name
	}
	return strings.Join(names, ", ")
}

// foundMessage lists the resources that exist, for an Applied that only
// says whether something does.
func (r *run) foundMessage() string {
	var names []string
	for _, rp := range r.e.prog.resources {
		if len(r.found[rp.name]) > 0 {
			names = append(names, rp.name)
		}
	}
	if len(names) == 0 {
		return "no resource exists"
	}
	return "existing: " + strings.Join(names, ", ")
}
