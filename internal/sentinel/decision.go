package sentinel

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	"sigs.k8s.io/yaml"
)

// Decision is the sentinel's message_decision: named CEL params evaluated
// in order (a later one may use an earlier one by name), and a CEL result
// that says whether to publish. Every expression sees:
//
//   - resource: the order (id, project, service_type, generation, state,
//     status, deleting, deleted_at, update_time, ready, adapters: a map of
//     adapter name to {observed_generation, conditions: {type: status}});
//   - last: the sentinel's last publish for it (published, generation,
//     published_time: the epoch when never published);
//   - now, and config: {debounce, max_age}, the durations configured.
//
// The reason an event gives is the name of the first param that is true
// ("" when none is, e.g. for a result that does not use them).
type Decision struct {
	Params []Param `json:"params"`
	Result string  `json:"result"`
}

// Param is one named CEL expression of a [Decision].
type Param struct {
	Name string `json:"name"`
	Expr string `json:"expr"`
}

// DefaultDecision is HyperFleet's message_decision, Steward's way: publish
// for a new order, a changed generation (a spec change or a delete), a
// deleting or not-ready order once debounce has passed since the last
// publish, and any order not published for max_age.
func DefaultDecision() Decision {
	return Decision{
		Params: []Param{
			{Name: ReasonNew, Expr: "!last.published"},
			{Name: ReasonGenerationChanged, Expr: "resource.generation != last.generation"},
			{Name: ReasonDeleting, Expr: "resource.deleting && !resource.ready && now - last.published_time >= config.debounce"},
			{Name: ReasonNotReady, Expr: "!resource.ready && now - last.published_time >= config.debounce"},
			{Name: ReasonMaxAge, Expr: "now - last.published_time >= config.max_age"},
		},
		Result: strings.Join([]string{ReasonNew, ReasonGenerationChanged, ReasonDeleting, ReasonNotReady, ReasonMaxAge}, " || "),
	}
}

// The reasons of the default decision.
const (
	ReasonNew               = "new"
	ReasonGenerationChanged = "generation_changed"
	ReasonDeleting          = "deleting"
	ReasonNotReady          = "not_ready"
	ReasonMaxAge            = "max_age"
)

// paramName is what a param may be called: a CEL identifier that is not
// one of the variables.
var paramName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// decider is a compiled Decision.
type decider struct {
	names  []string
	params []cel.Program
	result cel.Program
}

// compile checks d and compiles its expressions; the error names every
// expression that does not compile, or is not a bool.
func compile(d Decision) (*decider, error) {
	opts := []cel.EnvOption{
		cel.Variable("resource", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("last", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("now", cel.TimestampType),
		cel.Variable("config", cel.MapType(cel.StringType, cel.DurationType)),
		ext.Strings(),
	}
	var errs []error
	seen := map[string]bool{}
	for i, p := range d.Params {
		switch {
		case !paramName.MatchString(p.Name):
			errs = append(errs, fmt.Errorf("message_decision.params[%d].name %q: want a lower-case identifier", i, p.Name))
		case seen[p.Name] || reserved[p.Name]:
			errs = append(errs, fmt.Errorf("message_decision.params[%d].name %q: already taken", i, p.Name))
		}
		seen[p.Name] = true
		opts = append(opts, cel.Variable(p.Name, cel.BoolType))
	}
	if d.Result == "" {
		errs = append(errs, errors.New("message_decision.result: required"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	env, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, err
	}
	dc := &decider{}
	program := func(field, expr string) cel.Program {
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, iss.Err()))
			return nil
		}
		if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
			errs = append(errs, fmt.Errorf("%s: is %s, want bool", field, ast.OutputType()))
			return nil
		}
		prg, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
		}
		return prg
	}
	for i, p := range d.Params {
		dc.names = append(dc.names, p.Name)
		dc.params = append(dc.params, program(fmt.Sprintf("message_decision.params[%d].expr", i), p.Expr))
	}
	dc.result = program("message_decision.result", d.Result)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return dc, nil
}

var reserved = map[string]bool{"resource": true, "last": true, "now": true, "config": true}

// decide evaluates the decision for one order: whether to publish and why.
// vars holds resource, last, now and config; decide adds the
// params to it.
func (d *decider) decide(vars map[string]any) (publish bool, reason string, err error) {
	for i, prg := range d.params {
		v, err := evalBool(prg, vars)
		if err != nil {
			return false, "", fmt.Errorf("param %s: %w", d.names[i], err)
		}
		vars[d.names[i]] = v
		if v && reason == "" {
			reason = d.names[i]
		}
	}
	publish, err = evalBool(d.result, vars)
	if err != nil {
		return false, "", fmt.Errorf("result: %w", err)
	}
	return publish, reason, nil
}

func evalBool(prg cel.Program, vars map[string]any) (bool, error) {
	out, _, err := prg.Eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("evaluates to %s, want bool", out.Type())
	}
	return bool(b), nil
}

// epoch stands for "never" in last.published_time, so that arithmetic on it
// needs no has() guard: now - epoch exceeds every debounce and max age.
var epoch = time.Unix(0, 0).UTC()

// LoadDecision reads a message_decision from a YAML (or JSON) file:
//
//	params:
//	  - {name: new, expr: "!last.published"}
//	result: "new"
//
// It is checked when the sentinel is built ([New]).
func LoadDecision(path string) (*Decision, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d Decision
	if err := yaml.UnmarshalStrict(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &d, nil
}
