package adapter

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// defaultAPITimeout bounds an api_call without a timeout.
const defaultAPITimeout = 10 * time.Second

// program is a checked Config, ready to run: templates parsed, CEL
// compiled, values normalized. It is never changed after compile, so an
// Executor may run it concurrently.
type program struct {
	// names are every param and capture, so that CEL sees null for one a
	// failed or skipped phase never set, instead of failing on it.
	names         []string
	params        []paramProg
	preconditions []preconditionProg
	whenDeleting  cel.Program // nil: the event's deleted_at is set
	resources     []resourceProg
	conditions    []conditionProg
	data          []dataProg
}

type sourceKind int

const (
	sourceEvent sourceKind = iota
	sourceEnv
	sourceParam
	sourceAPICall
	sourceExpression
)

type paramProg struct {
	name     string
	kind     sourceKind
	ref      string   // sourceParam: the earlier param; sourceEnv: the variable
	path     []string // sourceEvent, sourceParam
	call     *callProg
	expr     cel.Program
	required bool
	def      any
}

type callProg struct {
	method  string
	url     textTemplate
	timeout time.Duration
}

type preconditionProg struct {
	name     string
	call     *callProg
	captures []captureProg
	checks   []checkProg
	expr     cel.Program
}

type captureProg struct {
	name string
	path []string
	expr cel.Program // parsed only: its variables are the response's fields
	def  any
}

type checkProg struct {
	field    string
	path     []string
	operator string
	value    any
	values   []any
}

type resourceProg struct {
	name      string
	gvk       schema.GroupVersionKind
	manifest  valueTemplate
	namespace textTemplate // discovery.namespace, else the manifest's
	byName    textTemplate
	selector  map[string]textTemplate
	policy    metav1.DeletionPropagation
	after     []string
	retain    bool
}

type conditionProg struct {
	typ                     string
	status, reason, message valueProg
}

type dataProg struct {
	key   string
	value valueProg
}

// valueProg is a compiled [Value]: a literal, an expression, or unset.
type valueProg struct {
	set  bool
	lit  any
	expr cel.Program
}

// check validates cfg and compiles it. With graph set, the deletion order
// (after names and cycles) is checked too: Parse checks it, NewExecutor
// leaves it to Execute, which reports it on the order.
func check(cfg *Config, graph bool) (*program, problems) {
	var ps problems
	validateShape(cfg, &ps)
	if graph {
		ps = append(ps, deletionGraphProblems(cfg.Resources)...)
	}
	prog, more := compile(cfg)
	return prog, append(ps, more...)
}

// compiler holds what compile has declared so far: each expression and
// template is compiled in the scope of the names declared before it, so a
// name read before (or without) its declaration is a load error.
type compiler struct {
	ps       problems
	scope    celScope
	declared []string        // params and captures so far, in order
	inScope  map[string]bool // names templates may read
}

// compile parses every template and compiles every CEL expression.
func compile(cfg *Config) (*program, problems) {
	base, err := newCELEnv()
	if err != nil {
		return nil, problems{{Field: "(cel)", Message: err.Error()}}
	}
	c := &compiler{scope: celScope{env: base}, inScope: map[string]bool{varEvent: true}}
	prog := &program{}
	for i, p := range cfg.Params {
		prog.params = append(prog.params, c.param(fmt.Sprintf("params[%d]", i), p))
	}
	for i, pc := range cfg.Preconditions {
		prog.preconditions = append(prog.preconditions, c.precondition(fmt.Sprintf("preconditions[%d]", i), pc))
	}
	if cfg.WhenDeleting != "" {
		prog.whenDeleting = c.scope.compile("when_deleting", cfg.WhenDeleting, cel.BoolType, &c.ps)
	}
	prog.names = c.declared
	for i, r := range cfg.Resources {
		prog.resources = append(prog.resources, compileResource(fmt.Sprintf("resources[%d]", i), r, c.inScope, &c.ps))
	}
	c.post(cfg.Post, prog)
	return prog, c.ps
}

// declare brings a param or capture into scope. A bad name (which
// validateShape reports) still counts for templates, so that one mistake
// is not reported again at every template that reads it.
func (c *compiler) declare(field, name string) {
	if name == "" || c.inScope[name] {
		return
	}
	c.inScope[name] = true
	if !identifier.MatchString(name) || reservedNames[name] {
		return
	}
	s, err := c.scope.extend([]string{name}, false)
	if err != nil {
		c.ps.add(field, "%v", err)
		return
	}
	c.scope = s
	c.declared = append(c.declared, name)
}

func (c *compiler) param(field string, p Param) paramProg {
	pp := paramProg{name: p.Name, required: p.Required, def: normalize(p.Default)}
	switch s := p.Source; {
	case s.APICall != nil:
		pp.kind, pp.call = sourceAPICall, compileCall(field+".source.api_call", *s.APICall, c.inScope, &c.ps)
	case s.Expression != "":
		pp.kind, pp.expr = sourceExpression, c.scope.compile(field+".source.expression", s.Expression, nil, &c.ps)
	default:
		head, rest, _ := strings.Cut(s.Path, ".")
		pp.path, _ = splitPath(rest)
		switch head {
		case "event":
			pp.kind = sourceEvent
		case "env":
			pp.kind, pp.ref, pp.path = sourceEnv, rest, nil
		default:
			pp.kind, pp.ref = sourceParam, head
		}
	}
	c.declare(field+".name", p.Name)
	return pp
}

func (c *compiler) precondition(field string, pc Precondition) preconditionProg {
	pp := preconditionProg{name: pc.Name}
	if pc.APICall != nil {
		pp.call = compileCall(field+".api_call", *pc.APICall, c.inScope, &c.ps)
	}
	for j, cp := range pc.Capture {
		cf := fmt.Sprintf("%s.capture[%d]", field, j)
		prog := captureProg{name: cp.Name, def: normalize(cp.Default)}
		if cp.Expression != "" {
			prog.expr = c.scope.parseOnly(cf+".expression", cp.Expression, &c.ps)
		} else {
			prog.path, _ = splitPath(cp.Field)
		}
		pp.captures = append(pp.captures, prog)
	}
	// The captures are in scope for this precondition's own checks.
	for j, cp := range pc.Capture {
		c.declare(fmt.Sprintf("%s.capture[%d].name", field, j), cp.Name)
	}
	for _, ck := range pc.Conditions {
		path, _ := splitPath(ck.Field)
		values := make([]any, len(ck.Values))
		for k, v := range ck.Values {
			values[k] = normalize(v)
		}
		pp.checks = append(pp.checks, checkProg{field: ck.Field, path: path, operator: ck.Operator,
			value: normalize(ck.Value), values: values})
	}
	if pc.Expression != "" {
		pp.expr = c.scope.compile(field+".expression", pc.Expression, cel.BoolType, &c.ps)
	}
	return pp
}

// post compiles the overrides and data, which also see resources and
// adapter.
func (c *compiler) post(p Post, prog *program) {
	scope, err := c.scope.extend(nil, true)
	if err != nil {
		c.ps.add("post", "%v", err)
		return
	}
	for i, cr := range p.Conditions {
		field := fmt.Sprintf("post.conditions[%d]", i)
		prog.conditions = append(prog.conditions, conditionProg{
			typ:     cr.Type,
			status:  compileValue(scope, field+".status", statusValue(cr.Status), cel.StringType, &c.ps),
			reason:  compileValue(scope, field+".reason", cr.Reason, cel.StringType, &c.ps),
			message: compileValue(scope, field+".message", cr.Message, cel.StringType, &c.ps),
		})
	}
	for _, k := range slices.Sorted(maps.Keys(p.Data)) {
		prog.data = append(prog.data, dataProg{key: k, value: compileValue(scope, "post.data."+k, p.Data[k], nil, &c.ps)})
	}
}

func compileCall(field string, c APICall, names map[string]bool, ps *problems) *callProg {
	cp := &callProg{method: c.Method, timeout: c.Timeout.Duration, url: parseText(field+".url", c.URL, names, ps)}
	if cp.method == "" {
		cp.method = http.MethodGet
	}
	if cp.timeout <= 0 {
		cp.timeout = defaultAPITimeout
	}
	return cp
}

func compileResource(field string, r Resource, names map[string]bool, ps *problems) resourceProg {
	apiVersion, _ := r.Manifest["apiVersion"].(string)
	kind, _ := r.Manifest["kind"].(string)
	rp := resourceProg{
		name:     r.Name,
		gvk:      schema.FromAPIVersionAndKind(apiVersion, kind),
		manifest: parseValue(field+".manifest", normalize(r.Manifest), names, ps),
		byName:   parseText(field+".discovery.by_name", r.Discovery.ByName, names, ps),
		policy:   metav1.DeletionPropagation(r.DeleteOptions.PropagationPolicy),
		after:    r.DeleteOptions.After,
		retain:   r.DeleteOptions.Retain,
	}
	if rp.policy == "" {
		rp.policy = metav1.DeletePropagationBackground
	}
	ns := r.Discovery.Namespace
	nsField := field + ".discovery.namespace"
	if ns == "" {
		if meta, ok := r.Manifest["metadata"].(map[string]any); ok {
			ns, _ = meta["namespace"].(string)
		}
		nsField = field + ".manifest.metadata.namespace"
	}
	var discard problems // the manifest's namespace was parsed with the manifest
	target := ps
	if r.Discovery.Namespace == "" {
		target = &discard
	}
	rp.namespace = parseText(nsField, ns, names, target)
	if r.Discovery.BySelectors != nil {
		rp.selector = map[string]textTemplate{}
		for k, v := range r.Discovery.BySelectors.LabelSelector {
			rp.selector[k] = parseText(field+".discovery.by_selectors.label_selector."+k, v, names, ps)
		}
	}
	return rp
}

func compileValue(scope celScope, field string, v Value, want *cel.Type, ps *problems) valueProg {
	switch {
	case v.Expression != "":
		return valueProg{set: true, expr: scope.compile(field+".expression", v.Expression, want, ps)}
	case v.Literal != nil:
		return valueProg{set: true, lit: normalize(v.Literal)}
	}
	return valueProg{}
}

// statusValue turns a bool status literal into its string.
func statusValue(v Value) Value {
	if b, ok := v.Literal.(bool); ok {
		v.Literal = statusLiteral(b)
	}
	return v
}
