package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// checkPreconditions runs the preconditions in order and reports whether
// all passed; the first that does not pass is recorded in r.skip.
func (r *run) checkPreconditions(ctx context.Context) (bool, error) {
	for _, pc := range r.e.prog.preconditions {
		met, why, err := r.checkPrecondition(ctx, pc)
		if err != nil {
			if errors.Is(err, errOrderGone) || isTransient(err) {
				return false, err
			}
			return false, &stepError{phase: phasePreconditions, step: pc.name, err: err}
		}
		if !met {
			r.skip = fmt.Sprintf("precondition %s not met: %s", pc.name, why)
			return false, nil
		}
	}
	return true, nil
}

func (r *run) checkPrecondition(ctx context.Context, pc preconditionProg) (bool, string, error) {
	if pc.call != nil {
		resp, err := r.call(ctx, pc.call)
		if err != nil {
			return false, "", err
		}
		for _, c := range pc.captures {
			v, err := capture(ctx, c, resp)
			if err != nil {
				return false, "", fmt.Errorf("capture %s: %w", c.name, err)
			}
			r.vars[c.name] = v
		}
	}
	for _, c := range pc.checks {
		v, ok := lookup(r.vars, c.path)
		if met, why := evalCheck(c, v, ok); !met {
			return false, why, nil
		}
	}
	if pc.expr != nil {
		ok, err := evalBool(ctx, pc.expr, r.celVars())
		if err != nil {
			return false, "", fmt.Errorf("expression: %w", err)
		}
		if !ok {
			return false, "expression is false", nil
		}
	}
	return true, "", nil
}

// capture takes one value from a response: a dot path (absent → its
// default), or a CEL expression whose variables are the response's
// top-level fields.
func capture(ctx context.Context, c captureProg, resp any) (any, error) {
	if c.expr == nil {
		v, ok := lookup(resp, c.path)
		if !ok || v == nil {
			return c.def, nil
		}
		return v, nil
	}
	fields, ok := resp.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the response is not a JSON object")
	}
	return evalCEL(ctx, c.expr, fields)
}

// evalCheck applies one condition to v (ok: whether the field exists) and
// says why it fails. A missing field fails every operator but notExists,
// notEquals and notIn.
func evalCheck(c checkProg, v any, ok bool) (bool, string) {
	exists := ok && v != nil
	var met bool
	switch c.operator {
	case opExists:
		met = exists
	case opNotExists:
		met = !exists
	case opEquals:
		met = exists && equal(v, c.value)
	case opNotEquals:
		met = !exists || !equal(v, c.value)
	case opIn, opNotIn:
		in := false
		for _, w := range c.values {
			in = in || (exists && equal(v, w))
		}
		met = in == (c.operator == opIn)
	case opContains:
		met = exists && contains(v, c.value)
	default: // the ordering operators
		cmp, comparable := compare(v, c.value)
		switch {
		case !exists || !comparable:
			met = false
		case c.operator == opGreaterThan:
			met = cmp > 0
		case c.operator == opGreaterThanOrEqual:
			met = cmp >= 0
		case c.operator == opLessThan:
			met = cmp < 0
		case c.operator == opLessThanOrEqual:
			met = cmp <= 0
		}
	}
	if met {
		return true, ""
	}
	got := "absent"
	if exists {
		got = "is " + jsonText(v)
	}
	switch {
	case c.operator == opIn || c.operator == opNotIn:
		return false, fmt.Sprintf("%s %s, want %s %s", c.field, got, c.operator, jsonText(c.values))
	case c.operator == opExists || c.operator == opNotExists:
		return false, fmt.Sprintf("%s %s, want %s", c.field, got, c.operator)
	}
	return false, fmt.Sprintf("%s %s, want %s %s", c.field, got, c.operator, jsonText(c.value))
}

// equal compares JSON-ish values; numbers compare by value whatever
// their Go type (3 == 3.0).
func equal(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return reflect.DeepEqual(normalize(a), normalize(b))
}

// compare orders two numbers or two strings (RFC 3339 times order as
// strings); anything else is not comparable.
func compare(a, b any) (int, bool) {
	if x, ok := number(a); ok {
		y, ok := number(b)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	}
	x, ok1 := a.(string)
	y, ok2 := b.(string)
	if !ok1 || !ok2 {
		return 0, false
	}
	return strings.Compare(x, y), true
}

// contains: a substring of a string, an element of a list, a key of a map.
func contains(v, want any) bool {
	switch x := v.(type) {
	case string:
		s, ok := want.(string)
		return ok && strings.Contains(x, s)
	case []any:
		for _, e := range x {
			if equal(e, want) {
				return true
			}
		}
	case map[string]any:
		s, ok := want.(string)
		if ok {
			_, has := x[s]
			return has
		}
	}
	return false
}

func number(v any) (float64, bool) {
	switch x := normalize(v).(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
