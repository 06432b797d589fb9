package policy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/stewardhq/steward/internal/invalid"
)

// Evaluation outcomes (API.md, evaluateRequest `status`).
const (
	StatusApproved = "APPROVED"
	StatusModified = "MODIFIED"
)

// EvaluateParams is a request to run through the chain.
type EvaluateParams struct {
	// Spec is the requested spec; it is not modified.
	Spec map[string]any
	// ServiceType defaults to Spec["service_type"]; one of them is required.
	ServiceType string
	Labels      map[string]string
	// Project is the tenant the request belongs to.
	Project string
	// AvailableProviders are offered to the policies, less ExcludeProviders.
	AvailableProviders []ProviderInfo
	ExcludeProviders   []string
	// CurrentProvider is the provider that holds the resource today
	// (rehydration), shown to policies as input.current_provider. It is not
	// a selection: a policy must select it to keep it.
	CurrentProvider string
}

// Result is the chain's decision.
type Result struct {
	// Spec is the evaluated spec: the request's with every patch applied.
	Spec map[string]any
	// SelectedProvider is the last provider a policy selected, "" if none did.
	SelectedProvider string
	// Status is StatusModified when a patch changed the spec, else StatusApproved.
	Status string
	// Constraints maps each constrained field (dotted path) to the JSON
	// Schema in force for it ({"allOf": [...]} when several apply).
	Constraints map[string]any
	// ProviderConstraints is the intersection of every policy's.
	ProviderConstraints ProviderConstraints
	// Applied lists, in order, the ids of the policies whose selector
	// matched and that were evaluated.
	Applied []string
}

// Evaluate runs the enabled policies whose label selector matches the
// request, in chain order, and returns their combined decision. It returns
// an *invalid.Error without a spec or service type, a [*RejectedError], a
// [*ConflictError] or an [*EvaluationError] as the chain decides, and
// ErrNotLoaded before the first load. It is safe to call concurrently with
// policy changes: a call runs wholly on the set in force when it started.
func (s *Service) Evaluate(ctx context.Context, p EvaluateParams) (Result, error) {
	snap := s.current.Load()
	if snap == nil {
		return Result{}, ErrNotLoaded
	}
	ctx, cancel := context.WithTimeoutCause(ctx, s.cfg.EvaluationTimeout, errChainTimeout)
	defer cancel()
	return evaluate(ctx, snap.chain, s.schemas, p)
}

var errChainTimeout = errors.New("the policy chain did not finish in time")

// evaluation is the state one run of the chain accumulates.
type evaluation struct {
	serviceType string
	orig, spec  map[string]any
	available   []ProviderInfo
	fields      *constraintSet
	providers   ProviderConstraints
	// providersBy is the last policy that added provider constraints.
	providersBy *Ref
	selected    string
	selectedBy  *Ref
	// static holds the input members no policy changes; dynamic caches
	// the others until a policy changes them; in caches the whole input.
	static  [][2]*ast.Term
	dynamic map[string]*ast.Term
	in      ast.Value
	// dcm adds DCM's names for the input members (inputAliases).
	dcm bool
}

func evaluate(ctx context.Context, chain []entry, schemas *schemaCache, p EvaluateParams) (Result, error) {
	dcm := slices.ContainsFunc(chain, func(e entry) bool { return e.mod.dcmInput })
	ev, err := newEvaluation(p, schemas, dcm)
	if err != nil {
		return Result{}, err
	}
	var res Result
	labels := selectorLabels(ev.orig, p.Labels)
	for _, e := range chain {
		if !e.policy.Matches(ev.serviceType, p.Project, labels) {
			continue
		}
		res.Applied = append(res.Applied, e.policy.ID)
		out, ok, err := ev.run(ctx, e)
		if err != nil {
			return Result{}, err
		}
		if ok {
			if err := ev.apply(e.policy, out); err != nil {
				return Result{}, err
			}
		}
	}
	res.Spec = plainJSON(ev.spec).(map[string]any)
	res.Status = StatusApproved
	if !equalJSON(ev.orig, ev.spec) {
		res.Status = StatusModified
	}
	res.SelectedProvider, res.Constraints, res.ProviderConstraints = ev.selected, ev.fields.view, ev.providers
	return res, nil
}

// selectorLabels are the labels policy selectors match: the spec's
// metadata.labels (where DCM's requests carry them) overlaid by the
// request's own labels, which win on a key both carry: they are what the
// orders API stores, filters by and shows. Labels are read from the
// request as sent, before any policy patches it.
func selectorLabels(spec map[string]any, labels map[string]string) map[string]string {
	meta, _ := spec["metadata"].(map[string]any)
	specLabels, _ := meta["labels"].(map[string]any)
	if len(specLabels) == 0 {
		return labels
	}
	out := make(map[string]string, len(specLabels)+len(labels))
	for k, v := range specLabels {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	maps.Copy(out, labels)
	return out
}

func newEvaluation(p EvaluateParams, schemas *schemaCache, dcm bool) (*evaluation, error) {
	if p.Spec == nil {
		return nil, invalid.New("spec", "is required")
	}
	st := p.ServiceType
	if st == "" {
		st, _ = p.Spec["service_type"].(string)
	}
	if st == "" {
		return nil, invalid.New("spec.service_type", "is required")
	}
	orig, err := toJSONValue(p.Spec)
	if err != nil {
		return nil, invalid.New("spec", "must be a JSON object: %v", err)
	}
	spec, _ := copyJSON(orig)
	ev := &evaluation{serviceType: st, orig: orig.(map[string]any), spec: spec.(map[string]any), fields: newConstraintSet(schemas),
		dynamic: map[string]*ast.Term{}, dcm: dcm}
	avail := []any{}
	for _, pi := range p.AvailableProviders {
		if slices.Contains(p.ExcludeProviders, pi.Name) {
			continue
		}
		ev.available = append(ev.available, pi)
		types, _ := copyJSON(nonNil(pi.ServiceTypes))
		meta, _ := copyJSON(nonNilMap(pi.Metadata))
		avail = append(avail, map[string]any{"name": pi.Name, "service_types": types, "metadata": meta, "status": pi.Status})
		if dcm {
			// DCM's agents carry these two; Steward keeps them in metadata.
			agent := avail[len(avail)-1].(map[string]any)
			agent["environment"], agent["cost"] = pi.Metadata[EnvironmentKey], pi.Metadata["cost"]
		}
	}
	labels, _ := copyJSON(nonNilMap(p.Labels))
	excluded, _ := copyJSON(nonNil(p.ExcludeProviders))
	static := map[string]any{
		"service_type":        st,
		"labels":              labels,
		"project":             p.Project,
		"current_provider":    p.CurrentProvider,
		"available_providers": avail,
		"exclude_providers":   excluded,
	}
	// The parts of the input no policy changes become Rego values once.
	for k, v := range static {
		term, err := ast.InterfaceToValue(v)
		if err != nil {
			return nil, fmt.Errorf("policy input %s: %w", k, err)
		}
		t := ast.NewTerm(term)
		ev.static = append(ev.static, [2]*ast.Term{ast.StringTerm(k), t})
		if alias := inputAliases[k]; alias != "" && dcm {
			ev.static = append(ev.static, [2]*ast.Term{ast.StringTerm(alias), t})
		}
	}
	return ev, nil
}

// run evaluates one policy; ok is false when its main is undefined (the
// policy has nothing to say about this request).
func (ev *evaluation) run(ctx context.Context, e entry) (out output, ok bool, err error) {
	input, err := ev.input()
	if err != nil {
		return output{}, false, err
	}
	rs, err := e.mod.query.Eval(ctx, rego.EvalParsedInput(input))
	if err != nil {
		if errors.Is(context.Cause(ctx), errChainTimeout) {
			return output{}, false, &EvaluationError{Policy: e.policy.Ref(), Err: errChainTimeout}
		}
		if ctx.Err() != nil {
			return output{}, false, ctx.Err()
		}
		return output{}, false, &EvaluationError{Policy: e.policy.Ref(), Err: err}
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return output{}, false, nil
	}
	if out, err = parseOutput(rs[0].Expressions[0].Value); err != nil {
		return output{}, false, &EvaluationError{Policy: e.policy.Ref(), Err: err}
	}
	return out, true, nil
}

// input is the Rego contract's input for the next policy. The object is
// rebuilt only when a policy changed a part of it, and then only that part
// is converted again.
func (ev *evaluation) input() (ast.Value, error) {
	if ev.in != nil {
		return ev.in, nil
	}
	terms := slices.Clone(ev.static)
	for _, k := range []string{"spec", "provider", "constraints", "provider_constraints"} {
		t := ev.dynamic[k]
		if t == nil {
			var err error
			if t, err = ev.convert(k); err != nil {
				return nil, err
			}
			ev.dynamic[k] = t
		}
		terms = append(terms, [2]*ast.Term{ast.StringTerm(k), t})
		terms = ev.appendAliases(terms, k, t)
	}
	ev.in = ast.NewObject(terms...)
	return ev.in, nil
}

// convert makes the dynamic input member k a Rego value.
func (ev *evaluation) convert(k string) (*ast.Term, error) {
	var v any
	switch k {
	case "spec":
		v = ev.spec
	case "provider":
		v = ev.selected
	case "constraints":
		v = ev.fields.view
	case "provider_constraints":
		if ev.providers.empty() {
			return emptyProviderConstraints(), nil
		}
		v = ev.providers.input()
	}
	val, err := ast.InterfaceToValue(v)
	if err != nil {
		return nil, fmt.Errorf("policy input %s: %w", k, err)
	}
	return ast.NewTerm(val), nil
}

// inputAliases are DCM's names for input members, so that a policy written
// for DCM reads what it expects: the agent is the provider.
// (provider_constraints is also service_provider_constraints.) They are
// added only when a policy in the chain may read them (module.dcmInput).
var inputAliases = map[string]string{
	"provider":             "agent",
	"provider_constraints": keyAgentConstraints,
	"available_providers":  "available_agents",
	"exclude_providers":    "exclude_agents",
}

// dcmInputNames are the input members DCM's policies read under DCM's names.
var dcmInputNames = []string{"agent", keyAgentConstraints, keyServiceProviderConstraints, "available_agents", "exclude_agents"}

// input is the constraints as policies see them: every member present,
// DCM's environment_constraints as the list of environments.
func (c ProviderConstraints) input() map[string]any {
	str := func(s []string) []any {
		out := make([]any, len(s))
		for i, v := range s {
			out[i] = v
		}
		return out
	}
	meta := make(map[string]any, len(c.Metadata))
	for k, v := range c.Metadata {
		meta[k] = v
	}
	return map[string]any{"allow_list": str(c.AllowList), "patterns": str(c.Patterns), "globs": str(c.Globs),
		"metadata": meta, "environment_constraints": str(c.Environments), "environment_patterns": str(c.EnvironmentPatterns)}
}

// appendAliases adds DCM's names for the dynamic input member k, when a
// policy in the chain may read them.
func (ev *evaluation) appendAliases(terms [][2]*ast.Term, k string, t *ast.Term) [][2]*ast.Term {
	if !ev.dcm {
		return terms
	}
	if alias := inputAliases[k]; alias != "" {
		terms = append(terms, [2]*ast.Term{ast.StringTerm(alias), t})
	}
	if k == "provider_constraints" {
		terms = append(terms, [2]*ast.Term{ast.StringTerm(keyServiceProviderConstraints), t})
	}
	return terms
}

// emptyProviderConstraints is the input of a chain no policy has
// constrained providers in yet: built once, shared (OPA does not modify its
// input).
var emptyProviderConstraints = sync.OnceValue(func() *ast.Term {
	v, err := ast.InterfaceToValue(ProviderConstraints{}.input())
	if err != nil {
		panic(err)
	}
	return ast.NewTerm(v)
})

// empty reports whether c allows every provider.
func (c ProviderConstraints) empty() bool {
	return len(c.AllowList) == 0 && len(c.Patterns) == 0 && len(c.Globs) == 0 && len(c.Metadata) == 0 &&
		len(c.Environments) == 0 && len(c.EnvironmentPatterns) == 0
}

// changed marks input parts to convert again.
func (ev *evaluation) changed(keys ...string) {
	for _, k := range keys {
		delete(ev.dynamic, k)
	}
	ev.in = nil
}

// apply folds one policy's answer into the evaluation: rejection first,
// then its field constraints, its patch, its provider constraints and its
// provider choice, each checked against everything decided before.
func (ev *evaluation) apply(p Policy, out output) error {
	if out.Rejected {
		return &RejectedError{Policy: p.Ref(), Reason: cmp.Or(out.RejectionReason, "the policy gave no reason")}
	}
	recheck := false
	for _, path := range slices.Sorted(maps.Keys(out.Constraints)) {
		if err := ev.fields.add(p, path, out.Constraints[path]); err != nil {
			return err
		}
		ev.changed("constraints")
		recheck = true
	}
	if out.Patch != nil {
		if st, ok := out.Patch["service_type"]; ok && st != ev.serviceType {
			return &ConflictError{Policy: p.Ref(), Field: "service_type", Reason: "a policy may not change the service type"}
		}
		ev.spec = mergePatch(ev.spec, out.Patch).(map[string]any)
		ev.changed("spec")
		recheck = true
	}
	if recheck {
		if err := ev.fields.check(ev.spec, ev.orig, p); err != nil {
			return err
		}
	}
	for _, pc := range out.ProviderConstraints {
		if err := ev.constrainProviders(p, pc); err != nil {
			return err
		}
	}
	if out.SelectedProvider != "" {
		return ev.selectProvider(p, out.SelectedProvider)
	}
	return nil
}

func (ev *evaluation) constrainProviders(p Policy, more ProviderConstraints) error {
	merged, conflict := ev.providers.merge(more)
	if conflict != "" {
		return &ConflictError{Policy: p.Ref(), Field: "provider", With: ev.providersBy, Reason: conflict}
	}
	ev.providers, ev.providersBy = merged, refOf(p)
	ev.changed("provider_constraints")
	if ev.selected != "" && !ev.providers.Allows(ev.provider(ev.selected)) {
		return &ConflictError{Policy: p.Ref(), Field: "provider", With: ev.selectedBy,
			Reason: fmt.Sprintf("its provider constraints exclude provider %q, selected earlier", ev.selected)}
	}
	return nil
}

func (ev *evaluation) selectProvider(p Policy, name string) error {
	i := slices.IndexFunc(ev.available, func(pi ProviderInfo) bool { return pi.Name == name })
	switch {
	case i < 0:
		return &ConflictError{Policy: p.Ref(), Field: "provider",
			Reason: fmt.Sprintf("provider %q is not available (unknown or excluded)", name)}
	case !ev.available[i].Serves(ev.serviceType):
		return &ConflictError{Policy: p.Ref(), Field: "provider",
			Reason: fmt.Sprintf("provider %q does not serve %q", name, ev.serviceType)}
	case !ev.providers.Allows(ev.available[i]):
		return &ConflictError{Policy: p.Ref(), Field: "provider", With: ev.providersBy,
			Reason: fmt.Sprintf("provider %q is excluded by the provider constraints", name)}
	}
	ev.selected, ev.selectedBy = name, refOf(p)
	ev.changed("provider")
	return nil
}

// provider returns the available provider with the name (a bare name if
// it is not available, which no allow list or metadata then matches).
func (ev *evaluation) provider(name string) ProviderInfo {
	for _, pi := range ev.available {
		if pi.Name == name {
			return pi
		}
	}
	return ProviderInfo{Name: name}
}

func refOf(p Policy) *Ref {
	r := p.Ref()
	return &r
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}
