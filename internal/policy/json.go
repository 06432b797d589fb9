package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// toJSONValue returns a deep copy of v made of plain JSON values
// (map[string]any, []any, string, bool, nil and numbers), which OPA and the
// schema validator read directly. Maps and slices of strings become their
// generic forms; any other type goes through a JSON round trip, with
// numbers as json.Number.
func toJSONValue(v any) (any, error) {
	if c, ok := copyJSON(v); ok {
		return c, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode JSON value: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("decode JSON value: %w", err)
	}
	return out, nil
}

// copyJSON deep-copies the types json.Unmarshal produces (and string maps
// and slices); ok is false when v holds anything else.
func copyJSON(v any) (any, bool) {
	switch v := v.(type) {
	case nil, string, bool, json.Number:
		return v, true
	case float64:
		return v, !math.IsNaN(v) && !math.IsInf(v, 0)
	case int, int64:
		return v, true
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			c, ok := copyJSON(e)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			c, ok := copyJSON(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	case map[string]string:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = e
		}
		return out, true
	case []string:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = e
		}
		return out, true
	}
	return nil, false
}

// plainJSON returns a copy of v with json.Number turned into float64, as
// json.Unmarshal gives them: the form the rest of Steward handles specs in.
func plainJSON(v any) any {
	switch v := v.(type) {
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return f
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = plainJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = plainJSON(e)
		}
		return out
	}
	return v
}

// mergePatch applies an RFC 7386 JSON merge patch to target and returns the
// result. It reuses and changes target's maps, so the caller must own them.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

// equalJSON reports whether two JSON values are equal, numbers by value
// (2, 2.0 and json.Number("2") are equal).
func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !equalJSON(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], b[i]) {
				return false
			}
		}
		return true
	case nil, string, bool:
		return a == b
	}
	x, okA := number(a)
	y, okB := number(b)
	return okA && okB && x.Cmp(y) == 0
}

// number reads a JSON number of any Go form exactly.
func number(v any) (*big.Rat, bool) {
	var s string
	switch v := v.(type) {
	case json.Number:
		s = v.String()
	case float64:
		s = strconv.FormatFloat(v, 'g', -1, 64)
	case int:
		s = strconv.Itoa(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	default:
		return nil, false
	}
	return new(big.Rat).SetString(s)
}

// lookup finds the value at a dotted path ("vcpu.count", "disks.0.size")
// in a JSON value; ok is false when some step is missing.
func lookup(v any, path string) (any, bool) {
	for _, seg := range strings.Split(path, ".") {
		switch node := v.(type) {
		case map[string]any:
			next, ok := node[seg]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			v = node[i]
		default:
			return nil, false
		}
	}
	return v, true
}
