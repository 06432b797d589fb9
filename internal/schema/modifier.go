package schema

import (
	"cmp"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Attribute modifiers (LSM; API.md "x-modifier"): who may set a property
// and when.
const (
	// ModifierR is set only by the server or the provider; a client that
	// writes it is refused.
	ModifierR = "r"
	// ModifierRW is set at creation and read-only after. The default.
	ModifierRW = "rw"
	// ModifierRWPlus is set at creation and may be updated later, where the
	// lifecycle state allows updates.
	ModifierRWPlus = "rw+"
)

// Modifier returns the x-modifier in force at p in a value of the schema:
// the one declared by the innermost property along p that declares one, or
// [ModifierRW]. The walk follows "properties", "items", "prefixItems" and
// local "$ref"s; a location the schema does not describe inherits from the
// nearest one it does.
func (s *Schema) Modifier(p Path) string {
	mod := ModifierRW
	node, _ := s.doc.(map[string]any)
	for _, step := range p {
		node = s.resolve(node)
		if node == nil {
			break
		}
		var next map[string]any
		if step.isIndex || step.isSelector {
			next = s.itemSchema(node, step.index) // a selector picks an item: its index is 0 here
		} else {
			props, _ := node["properties"].(map[string]any)
			next, _ = props[step.key].(map[string]any)
		}
		next = s.resolve(next)
		if next == nil {
			break
		}
		if m, ok := next[keywordModifier].(string); ok {
			mod = m
		}
		node = next
	}
	return mod
}

// RootIsObject reports whether the schema's root says its values are
// objects ("type": "object", or a list of types holding only "object").
func (s *Schema) RootIsObject() bool {
	root := s.resolve(asObject(s.doc))
	switch t := root["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return len(t) == 1 && t[0] == "object"
	}
	return false
}

// Property returns the subschema of the top-level property name, and
// whether the schema declares it.
func (s *Schema) Property(name string) (map[string]any, bool) {
	root := s.resolve(asObject(s.doc))
	props, _ := root["properties"].(map[string]any)
	sub, ok := props[name].(map[string]any)
	return s.resolve(sub), ok
}

// DeclaresProperty reports whether the schema's root declares the
// property name.
func (s *Schema) DeclaresProperty(name string) bool {
	_, ok := s.Property(name)
	return ok
}

// Required reports whether the schema's root requires the property name.
func (s *Schema) Required(name string) bool {
	root := s.resolve(asObject(s.doc))
	req, _ := root["required"].([]any)
	for _, r := range req {
		if r == name {
			return true
		}
	}
	return false
}

// itemSchema is the schema of the index-th item of an array schema.
func (s *Schema) itemSchema(node map[string]any, index int) map[string]any {
	if prefix, ok := node["prefixItems"].([]any); ok && index < len(prefix) {
		sub, _ := prefix[index].(map[string]any)
		return sub
	}
	sub, _ := node["items"].(map[string]any)
	return sub
}

// resolve follows a local "$ref" ("#/$defs/x"), a few levels deep at most;
// a schema without one is returned as is.
func (s *Schema) resolve(node map[string]any) map[string]any {
	for range 8 {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		target, ok := strings.CutPrefix(ref, "#/")
		if !ok {
			return node
		}
		cur := asObject(s.doc)
		for part := range strings.SplitSeq(target, "/") {
			part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
			cur = asObject(cur[part])
		}
		if cur == nil {
			return node
		}
		node = cur
	}
	return node
}

func asObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// Changes returns the paths at which after differs from before, as deep as
// both are objects (or arrays of the same length), sorted: a property set,
// changed or removed is one path; an array whose length changed is the
// array's path.
func Changes(before, after map[string]any) []Path {
	var out []Path
	changes(nil, before, after, &out)
	slices.SortFunc(out, func(a, b Path) int { return cmp.Compare(a.String(), b.String()) })
	return out
}

func changes(at Path, before, after any, out *[]Path) {
	switch b := before.(type) {
	case map[string]any:
		a, ok := after.(map[string]any)
		if !ok {
			break
		}
		for _, k := range slices.Sorted(maps.Keys(unionKeys(b, a))) {
			changes(append(slices.Clip(at), pathStep{key: k}), b[k], a[k], out)
		}
		return
	case []any:
		a, ok := after.([]any)
		if !ok || len(a) != len(b) {
			break
		}
		for i := range b {
			changes(append(slices.Clip(at), pathStep{index: i, isIndex: true}), b[i], a[i], out)
		}
		return
	}
	if !reflect.DeepEqual(before, after) {
		*out = append(*out, at)
	}
}

func unionKeys(a, b map[string]any) map[string]bool {
	keys := make(map[string]bool, len(a)+len(b))
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

// NotUpdatable returns the paths at which after differs from before where
// the modifier in force is not rw+ (LSM: r is never written by a client,
// rw only at creation), each with its modifier. before and after are a
// value of the schema before and after an update.
func (s *Schema) NotUpdatable(before, after map[string]any) map[string]string {
	out := map[string]string{}
	for _, p := range Changes(before, after) {
		if m := s.Modifier(p); m != ModifierRWPlus {
			out[p.String()] = m
		}
	}
	return out
}
