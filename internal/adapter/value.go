package adapter

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// normalize returns v with JSON-ish Go values in the shapes unstructured
// objects and CEL agree on: map[string]any, []any, string, bool, nil,
// int64 for integers and float64 otherwise. A config built in Go may hold
// int or map[string]string; unstructured's DeepCopy panics on those.
func normalize(v any) any {
	switch x := v.(type) {
	case nil, string, bool, int64:
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case float32:
		return normalize(float64(x))
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String {
			out := make(map[string]any, rv.Len())
			for it := rv.MapRange(); it.Next(); {
				out[it.Key().String()] = normalize(it.Value().Interface())
			}
			return out
		}
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = normalize(rv.Index(i).Interface())
		}
		return out
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(rv.Uint())
	}
	return v
}

// lookup follows a dot path (a.b.0.c) into a JSON-ish value; an integer
// segment indexes a list. It reports whether the value exists.
func lookup(v any, path []string) (any, bool) {
	for _, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[seg]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// splitPath splits a dot path, rejecting empty segments.
func splitPath(s string) ([]string, error) {
	if s == "" {
		return nil, fmt.Errorf("empty path")
	}
	segs := strings.Split(s, ".")
	for _, seg := range segs {
		if seg == "" {
			return nil, fmt.Errorf("empty segment in path %q", s)
		}
	}
	return segs, nil
}
