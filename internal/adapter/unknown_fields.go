package adapter

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// shaper is a type with its own JSON decoding whose object form is
// described by a plain struct, so unknown keys in it can still be named.
type shaper interface{ shape() any }

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	shaperType      = reflect.TypeFor[shaper]()
)

// unknownFields walks the decoded YAML beside the Go type it decodes into
// and adds a problem for every key the type does not have. encoding/json's
// DisallowUnknownFields would stop at the first; an author wants them all.
func unknownFields(v any, t reflect.Type, path string, ps *problems) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		if t.Implements(shaperType) {
			if _, ok := v.(map[string]any); ok {
				unknownFields(v, reflect.TypeOf(reflect.Zero(t).Interface().(shaper).shape()), path, ps)
			}
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return // a type problem, which decoding reports
		}
		fields := jsonFields(t)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			f, ok := fields[k]
			if !ok {
				ps.add(joinPath(path, k), "unknown field")
				continue
			}
			unknownFields(m[k], f, joinPath(path, k), ps)
		}
	case reflect.Slice:
		l, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range l {
			unknownFields(e, t.Elem(), path+"["+strconv.Itoa(i)+"]", ps)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			unknownFields(m[k], t.Elem(), joinPath(path, k), ps)
		}
	}
}

// jsonFields maps a struct's JSON names to their field types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
