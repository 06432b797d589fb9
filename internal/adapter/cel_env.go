package adapter

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/ext"
)

// The variables every CEL expression may read besides the params and
// captures. resources and adapter only exist in post.
const (
	varEvent     = "event"
	varNow       = "now"
	varResources = "resources"
	varAdapter   = "adapter"
)

// reservedNames may not name a param or capture: the fixed variables and
// CEL's reserved words, which cannot be variables.
var reservedNames = map[string]bool{
	varEvent: true, varNow: true, varResources: true, varAdapter: true,
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true,
	"let": true, "loop": true, "package": true, "namespace": true, "return": true, "var": true,
	"void": true, "while": true,
}

// celInterruptEvery makes a long-running expression check its context
// every this many comprehension iterations, so a cancelled Execute stops.
const celInterruptEvery = 100

// newCELEnv returns the base environment: ext.Strings, event and now.
// Scopes extend it with the names they may read.
func newCELEnv() (*cel.Env, error) {
	return cel.NewEnv(
		ext.Strings(),
		cel.Variable(varEvent, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(varNow, cel.TimestampType),
	)
}

// celScope is the environment of one place in the config: the base
// variables plus the params and captures declared before it. Compiling
// in the scope makes an unknown variable a load error.
type celScope struct {
	env *cel.Env
}

// extend returns the scope with names added as dyn variables; post adds
// resources and adapter as maps.
func (s celScope) extend(names []string, post bool) (celScope, error) {
	opts := make([]cel.EnvOption, 0, len(names)+2)
	for _, n := range names {
		opts = append(opts, cel.Variable(n, cel.DynType))
	}
	if post {
		opts = append(opts,
			cel.Variable(varResources, cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable(varAdapter, cel.MapType(cel.StringType, cel.DynType)))
	}
	env, err := s.env.Extend(opts...)
	if err != nil {
		return celScope{}, err
	}
	return celScope{env: env}, nil
}

// compile type-checks expr and returns its program, or adds a problem at
// field. want, when set, is the type the expression must have (dyn passes,
// and is checked when evaluated).
func (s celScope) compile(field, expr string, want *cel.Type, ps *problems) cel.Program {
	ast, iss := s.env.Compile(expr)
	if iss.Err() != nil {
		ps.add(field, "%s", celMessage(iss.Err()))
		return nil
	}
	if want != nil && !ast.OutputType().IsExactType(want) && !ast.OutputType().IsExactType(cel.DynType) {
		ps.add(field, "is %s, want %s", ast.OutputType(), want)
		return nil
	}
	prg, err := s.env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(celInterruptEvery))
	if err != nil {
		ps.add(field, "%v", err)
		return nil
	}
	return prg
}

// parseOnly parses expr without checking its variables, for capture
// expressions: their variables are the response's top-level fields, which
// only the response knows. A syntax error is still a load error.
func (s celScope) parseOnly(field, expr string, ps *problems) cel.Program {
	ast, iss := s.env.Parse(expr)
	if iss.Err() != nil {
		ps.add(field, "%s", celMessage(iss.Err()))
		return nil
	}
	prg, err := s.env.Program(ast, cel.InterruptCheckFrequency(celInterruptEvery))
	if err != nil {
		ps.add(field, "%v", err)
		return nil
	}
	return prg
}

// celMessage flattens cel-go's multi-line issue text into one line.
func celMessage(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "ERROR: <input>:", "")), " ")
}

// evalCEL runs prg over vars and returns the result as a Go value
// ([celToGo]).
func evalCEL(ctx context.Context, prg cel.Program, vars map[string]any) (any, error) {
	out, _, err := prg.ContextEval(ctx, vars)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // interrupted, not wrong
		}
		return nil, err
	}
	return celToGo(out)
}

// evalBool runs prg and requires a bool.
func evalBool(ctx context.Context, prg cel.Program, vars map[string]any) (bool, error) {
	v, err := evalCEL(ctx, prg, vars)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("evaluates to %T, want bool", v)
	}
	return b, nil
}

// evalString runs prg and requires a string.
func evalString(ctx context.Context, prg cel.Program, vars map[string]any) (string, error) {
	v, err := evalCEL(ctx, prg, vars)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("evaluates to %T, want string", v)
	}
	return s, nil
}

// celToGo turns a CEL value into the JSON-ish Go values the rest of the
// package uses (int64 stays an integer, so a param computed in CEL prints
// as "3" in a template, not "3e+00").
func celToGo(v ref.Val) (any, error) {
	switch x := v.(type) {
	case *types.Err:
		return nil, x
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return int64(x), nil
	case types.Double:
		return float64(x), nil
	case types.String:
		return string(x), nil
	case types.Bytes:
		return string(x), nil
	case types.Timestamp:
		return x.Time.UTC().Format(time.RFC3339Nano), nil
	case types.Duration:
		return x.Duration.String(), nil
	case traits.Mapper:
		out := map[string]any{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			e, err := celToGo(x.Get(k))
			if err != nil {
				return nil, err
			}
			out[fmt.Sprint(k.Value())] = e
		}
		return out, nil
	case traits.Lister:
		n, _ := x.Size().(types.Int)
		out := make([]any, 0, int(n))
		for it := x.Iterator(); it.HasNext() == types.True; {
			e, err := celToGo(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	return normalize(v.Value()), nil
}
