package catalog

import (
	"encoding/json"
	"fmt"
	"github.com/stewardhq/steward/internal/schema"
	"slices"
	"testing"
)

// TestBuiltinSchemas checks promises of the built-in schema files that no
// single spec shows.
func TestBuiltinSchemas(t *testing.T) {
	t.Parallel()
	builtins, err := builtinServiceTypes()
	if err != nil {
		t.Fatalf("builtinServiceTypes: %v", err)
	}
	for _, st := range builtins {
		t.Run(st.ID, func(t *testing.T) {
			t.Parallel()
			var doc map[string]any
			if err := json.Unmarshal(st.Schema, &doc); err != nil {
				t.Fatalf("decode schema: %v", err)
			}
			if got := doc["$schema"]; got != schema.Draft2020 {
				t.Errorf("$schema = %v, want %s", got, schema.Draft2020)
			}
			props, _ := doc["properties"].(map[string]any)
			serviceType, _ := props["service_type"].(map[string]any)
			if got := serviceType["const"]; got != st.ID {
				t.Errorf("properties.service_type.const = %v, want %q: a spec must name its own type", got, st.ID)
			}
			required, _ := doc["required"].([]any)
			if !slices.Contains(required, any("service_type")) {
				t.Errorf("required = %v, want it to include service_type", required)
			}
			for _, p := range []string{"metadata", "provider_hints"} {
				if _, ok := props[p]; !ok {
					t.Errorf("properties lack the common %q", p)
				}
			}
			// API.md: additional properties allowed, at every level.
			walk(doc, "#", func(at string, schema map[string]any) {
				for _, kw := range []string{"additionalProperties", "unevaluatedProperties"} {
					if v, ok := schema[kw]; ok && v == false {
						t.Errorf("%s: %s is false; providers may add fields", at, kw)
					}
				}
				if schema["type"] == "object" {
					if _, ok := schema["additionalProperties"]; !ok {
						t.Errorf("%s: object without an explicit additionalProperties", at)
					}
				}
			})
		})
	}
}

// walk calls fn for every JSON object in v, with its JSON pointer.
func walk(v any, at string, fn func(at string, obj map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(at, v)
		for k, e := range v {
			walk(e, at+"/"+k, fn)
		}
	case []any:
		for i, e := range v {
			walk(e, fmt.Sprintf("%s/%d", at, i), fn)
		}
	}
}
