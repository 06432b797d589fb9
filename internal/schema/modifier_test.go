package schema

import (
	"encoding/json"
	"testing"
)

func TestSchema_Modifier(t *testing.T) {
	t.Parallel()
	s, err := Compile(json.RawMessage(`{
		"type": "object",
		"required": ["name"],
		"$defs": {"port": {"type": "object", "x-modifier": "rw+", "properties": {"number": {"type": "integer", "x-modifier": "rw"}}}},
		"properties": {
			"name": {"type": "string"},
			"size": {"type": "string", "x-modifier": "rw+"},
			"endpoint": {"type": "string", "x-modifier": "r"},
			"env": {"type": "array", "x-modifier": "rw+", "items": {"type": "object", "properties": {"value": {"type": "string"}, "secret": {"x-modifier": "r"}}}},
			"ports": {"type": "array", "items": {"$ref": "#/$defs/port"}}
		}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"name":                 ModifierRW,
		"size":                 ModifierRWPlus,
		"endpoint":             ModifierR,
		"undeclared":           ModifierRW,
		"env":                  ModifierRWPlus,
		"env[0].value":         ModifierRWPlus, // inherited from env
		"env[name=A].value":    ModifierRWPlus,
		"env[0].secret":        ModifierR,
		"ports[1]":             ModifierRWPlus, // through $ref
		"ports[1].number":      ModifierRW,
		"endpoint.deeper.part": ModifierR, // inherited below what the schema describes
	}
	for path, want := range cases {
		p, err := ParsePath(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Modifier(p); got != want {
			t.Errorf("Modifier(%s) = %q, want %q", path, got, want)
		}
	}
	if !s.RootIsObject() || !s.Required("name") || s.Required("size") || !s.DeclaresProperty("env") || s.DeclaresProperty("x") {
		t.Errorf("root facts wrong")
	}
}

func TestSchema_NotUpdatable(t *testing.T) {
	t.Parallel()
	s, err := Compile(json.RawMessage(`{"type": "object", "properties": {
		"name": {"type": "string"}, "size": {"x-modifier": "rw+"}, "endpoint": {"x-modifier": "r"},
		"env": {"type": "array", "x-modifier": "rw+"}, "labels": {"type": "object", "properties": {"team": {"x-modifier": "rw+"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]any{"name": "a", "size": "small", "env": []any{"x"}, "labels": map[string]any{"team": "a", "cost": "1"}}
	after := map[string]any{"name": "b", "size": "large", "endpoint": "h:1", "env": []any{"x", "y"},
		"labels": map[string]any{"team": "b", "cost": "2"}}
	got := s.NotUpdatable(before, after)
	want := map[string]string{"name": ModifierRW, "endpoint": ModifierR, "labels.cost": ModifierRW}
	if len(got) != len(want) {
		t.Fatalf("NotUpdatable = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("NotUpdatable[%s] = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if n := s.NotUpdatable(before, before); len(n) != 0 {
		t.Errorf("no change: %v", n)
	}
}
