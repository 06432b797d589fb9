package adapter

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCEL_EvaluatesOverJSONValuesAndKeepsIntegers(t *testing.T) {
	t.Parallel()
	env, err := newCELEnv()
	if err != nil {
		t.Fatal(err)
	}
	scope, err := celScope{env: env}.extend([]string{"order"}, true)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{
		"order":   normalize(map[string]any{"generation": 3.0, "deleted_at": nil, "name": "Big", "tags": []any{"a"}}),
		"event":   map[string]any{"id": "o1"},
		"now":     time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		"adapter": map[string]any{"mode": "create"},
		"resources": map[string]any{
			"ns": map[string]any{"status": map[string]any{"phase": "Active"}},
		},
	}
	tests := []struct {
		expr string
		want any
	}{
		{"order.generation + 1", int64(4)},
		{"order.deleted_at == null", true},
		{"has(order.deleted_at)", true},
		{"has(resources.ns) && resources.ns.status.phase == 'Active'", true},
		{"has(resources.job)", false},
		{"order.name.lowerAscii() + '-' + event.id", "big-o1"},
		{"{'n': order.generation, 'l': order.tags}", map[string]any{"n": int64(3), "l": []any{"a"}}},
		{"now", "2026-01-02T03:04:05Z"},
		{"2.5 * 2.0", 5.0},
		{"adapter.mode", "create"},
	}
	for _, tt := range tests {
		var ps problems
		prg := scope.compile("f", tt.expr, nil, &ps)
		if len(ps) > 0 {
			t.Errorf("%s: %v", tt.expr, ps)
			continue
		}
		got, err := evalCEL(t.Context(), prg, vars)
		if err != nil || !cmp.Equal(got, tt.want) {
			t.Errorf("%s = %#v, %v; want %#v", tt.expr, got, err, tt.want)
		}
	}
}

func TestCEL_CaptureExpressionsSeeTheResponsesFields(t *testing.T) {
	t.Parallel()
	env, _ := newCELEnv()
	var ps problems
	prg := celScope{env: env}.parseOnly("f", "generation * 2", &ps)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	got, err := capture(t.Context(), captureProg{name: "g", expr: prg}, map[string]any{"generation": int64(4)})
	if err != nil || got != int64(8) {
		t.Errorf("capture = %v, %v; want 8", got, err)
	}
	if _, err := capture(t.Context(), captureProg{name: "g", expr: prg}, map[string]any{}); err == nil {
		t.Error("a capture over a missing field succeeded")
	}
	got, _ = capture(t.Context(), captureProg{name: "s", path: []string{"a", "b"}, def: "d"}, map[string]any{})
	if got != "d" {
		t.Errorf("capture of an absent field = %v, want its default", got)
	}
}

func TestEvalCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		op     string
		v      any
		ok     bool
		value  any
		values []any
		want   bool
	}{
		{opEquals, "up", true, "up", nil, true},
		{opEquals, int64(3), true, 3.0, nil, true},
		{opEquals, nil, false, "up", nil, false},
		{opNotEquals, nil, false, "up", nil, true},
		{opIn, "up", true, nil, []any{"up", "down"}, true},
		{opIn, "x", true, nil, []any{"up", "down"}, false},
		{opNotIn, "x", true, nil, []any{"up"}, true},
		{opNotIn, nil, false, nil, []any{"up"}, true},
		{opContains, "hello", true, "ell", nil, true},
		{opContains, []any{"a", int64(1)}, true, 1.0, nil, true},
		{opContains, map[string]any{"k": 1}, true, "k", nil, true},
		{opGreaterThan, int64(3), true, int64(2), nil, true},
		{opGreaterThanOrEqual, int64(2), true, 2.0, nil, true},
		{opLessThan, "2026-01-01", true, "2026-02-01", nil, true},
		{opLessThanOrEqual, "a", true, int64(1), nil, false},
		{opExists, nil, true, nil, nil, false},
		{opExists, "", true, nil, nil, true},
		{opNotExists, nil, false, nil, nil, true},
	}
	for _, tt := range tests {
		got, why := evalCheck(checkProg{field: "f", operator: tt.op, value: tt.value, values: tt.values}, tt.v, tt.ok)
		if got != tt.want || (!got && why == "") {
			t.Errorf("%v %s %v%v = %v (%q), want %v", tt.v, tt.op, tt.value, tt.values, got, why, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	in := map[string]any{"i": 3, "f": 2.5, "whole": 4.0, "m": map[string]string{"a": "b"}, "l": []string{"x"}}
	want := map[string]any{"i": int64(3), "f": 2.5, "whole": int64(4), "m": map[string]any{"a": "b"}, "l": []any{"x"}}
	if diff := cmp.Diff(want, normalize(in)); diff != "" {
		t.Errorf("normalize (-want +got):\n%s", diff)
	}
	if v, ok := lookup(map[string]any{"a": []any{map[string]any{"b": 1}}}, []string{"a", "0", "b"}); !ok || v != 1 {
		t.Errorf("lookup = %v, %v", v, ok)
	}
	if _, ok := lookup(map[string]any{"a": []any{}}, []string{"a", "0"}); ok {
		t.Error("lookup past a list's end succeeded")
	}
}
