package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Limits on a field path, so a stored path stays readable and a set never
// walks far.
const (
	maxPathLen   = 512
	maxPathSteps = 32
)

// Path is a parsed field path (DCM's catalog-item-schema): a location
// in a spec, relative to its root. Its text is the one validation errors
// use for the same location, so the two can be compared: a property name
// after a dot ("vcpu.count"), an array index in brackets ("env[0].value"),
// and a property name that is not an identifier quoted in brackets
// (`metadata.labels["app.kubernetes.io/name"]`). An array item may also
// be selected by the value of one of its properties, LSM's dict-path
// selector: `process.env[name=LOG_LEVEL].value`, `disks[name="data disk"]`;
// exactly one item must match.
type Path []pathStep

// pathStep is a property name, an array index when isIndex is set, or an
// array item selected by key = match when isSelector is set.
type pathStep struct {
	key        string
	index      int
	isIndex    bool
	isSelector bool
	match      string
}

// matches reports whether an array item is the one a selector step picks:
// an object whose property key is the string match, or a number or boolean
// written match.
func (s pathStep) matches(item any) bool {
	obj, ok := item.(map[string]any)
	if !ok {
		return false
	}
	switch v := obj[s.key].(type) {
	case string:
		return v == s.match
	case bool, float64, int, int64, json.Number:
		return fmt.Sprint(v) == s.match
	}
	return false
}

// pick returns the index of the one item of arr the selector step matches,
// or an error saying there is none or more than one.
func (p Path) pick(arr []any, i int) (int, error) {
	found := -1
	for j, item := range arr {
		if p[i].matches(item) {
			if found >= 0 {
				return 0, fmt.Errorf("%s matches more than one item (%d and %d)", p[:i+1], found, j)
			}
			found = j
		}
	}
	if found < 0 {
		return 0, fmt.Errorf("%s matches no item", p[:i+1])
	}
	return found, nil
}

// ParsePath reads a field path. The error says what is wrong, without the
// field's name: callers name it.
func ParsePath(s string) (Path, error) {
	if s == "" {
		return nil, errors.New("is required")
	}
	if len(s) > maxPathLen {
		return nil, fmt.Errorf("must be at most %d characters long", maxPathLen)
	}
	var p Path
	rest := s
	for rest != "" {
		if len(p) == maxPathSteps {
			return nil, fmt.Errorf("must have at most %d steps", maxPathSteps)
		}
		var step pathStep
		var err error
		switch {
		case rest[0] == '[':
			step, rest, err = parseBracket(rest, len(p) == 0)
		case len(p) == 0:
			step, rest, err = parseKey(rest)
		case rest[0] == '.':
			step, rest, err = parseKey(rest[1:])
		default:
			err = fmt.Errorf("has %q where a '.' or '[' must follow %s", rest[0], p)
		}
		if err != nil {
			return nil, err
		}
		p = append(p, step)
	}
	return p, nil
}

// parseKey reads an identifier property name at the start of s.
func parseKey(s string) (pathStep, string, error) {
	end := 0
	for end < len(s) && s[end] != '.' && s[end] != '[' {
		end++
	}
	key := s[:end]
	if !simpleKey.MatchString(key) {
		if key == "" {
			return pathStep{}, "", errors.New("must be property names separated by dots (vcpu.count), with array indexes in brackets (env[0].value)")
		}
		return pathStep{}, "", fmt.Errorf("has %q, which is not a property name: write it as [%q]", key, key)
	}
	return pathStep{key: key}, s[end:], nil
}

// parseBracket reads "[n]" or `["name"]` at the start of s. An index may not
// come first: a spec is an object.
func parseBracket(s string, first bool) (pathStep, string, error) {
	inner := s[1:]
	if strings.HasPrefix(inner, `"`) {
		quoted, err := strconv.QuotedPrefix(inner)
		if err != nil {
			return pathStep{}, "", errors.New("has an unterminated quoted property name")
		}
		key, _ := strconv.Unquote(quoted)
		rest, ok := strings.CutPrefix(inner[len(quoted):], "]")
		if !ok || key == "" {
			return pathStep{}, "", fmt.Errorf("has a bad quoted property name %s", quoted)
		}
		return pathStep{key: key}, rest, nil
	}
	if key, value, ok := strings.Cut(inner, "="); ok && simpleKey.MatchString(key) {
		if first {
			return pathStep{}, "", errors.New("must start with a property name: a spec is an object")
		}
		return parseSelector(key, value)
	}
	digits, rest, ok := strings.Cut(inner, "]")
	if !ok {
		return pathStep{}, "", errors.New("has an unclosed '['")
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 || (len(digits) > 1 && digits[0] == '0') || strings.HasPrefix(digits, "+") {
		return pathStep{}, "", fmt.Errorf("has [%s], which is neither an array index nor a quoted property name", digits)
	}
	if first {
		return pathStep{}, "", errors.New("must start with a property name: a spec is an object")
	}
	return pathStep{index: n, isIndex: true}, rest, nil
}

// parseSelector reads the value of a `[key=value]` step, bare (up to the
// ']') or quoted, and what follows the ']'.
func parseSelector(key, s string) (pathStep, string, error) {
	if strings.HasPrefix(s, `"`) {
		quoted, err := strconv.QuotedPrefix(s)
		if err != nil {
			return pathStep{}, "", errors.New("has an unterminated quoted value in a [key=value] selector")
		}
		value, _ := strconv.Unquote(quoted)
		rest, ok := strings.CutPrefix(s[len(quoted):], "]")
		if !ok {
			return pathStep{}, "", errors.New("has an unclosed [key=value] selector")
		}
		return pathStep{key: key, isSelector: true, match: value}, rest, nil
	}
	value, rest, ok := strings.Cut(s, "]")
	if !ok {
		return pathStep{}, "", errors.New("has an unclosed [key=value] selector")
	}
	if value == "" || strings.ContainsAny(value, `["`) {
		return pathStep{}, "", fmt.Errorf("has a bad selector value %q: quote it", value)
	}
	return pathStep{key: key, isSelector: true, match: value}, rest, nil
}

// String renders p in its canonical form, which validation errors also use.
func (p Path) String() string { return p.Under("") }

// Key returns the path of the top-level property name.
func Key(name string) Path { return Path{{key: name}} }

// Head returns the property name the path starts with ("" for an index).
func (p Path) Head() string {
	if len(p) == 0 || p[0].isIndex {
		return ""
	}
	return p[0].key
}

// under renders p below the error field name root, as validation errors
// name the location: under("spec") of vcpu.count is "spec.vcpu.count".
func (p Path) Under(root string) string {
	var b strings.Builder
	b.WriteString(root)
	for _, s := range p {
		switch {
		case s.isIndex:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case s.isSelector:
			value := s.match
			if !simpleKey.MatchString(value) && strings.ContainsAny(value, `[]".= `) {
				value = strconv.Quote(value)
			}
			b.WriteString("[" + s.key + "=" + value + "]")
		default:
			writeKey(&b, s.key)
		}
	}
	return b.String()
}

// set stores v at p in m, creating missing objects and arrays on the way:
// a step followed by a name creates an object, one followed by an index an
// array. An index may name an existing item or the one just past the end
// (appending), never leave a gap. A null on the way counts as missing. m
// must not be nil; it is changed in place.
func (p Path) Set(m map[string]any, v any) error {
	if len(p) == 0 {
		return errors.New("is empty")
	}
	_, err := p.setIn(m, 0, v)
	return err
}

func (p Path) setIn(cur any, i int, v any) (any, error) {
	if i == len(p) {
		return v, nil
	}
	step := p[i]
	if step.isSelector {
		arr, ok := cur.([]any)
		if !ok {
			return nil, fmt.Errorf("cannot set %s: %s is %s, not an array", p, p[:i], jsonKind(cur))
		}
		j, err := p.pick(arr, i)
		if err != nil {
			return nil, fmt.Errorf("cannot set %s: %w", p, err)
		}
		nv, err := p.setIn(arr[j], i+1, v)
		if err != nil {
			return nil, err
		}
		arr[j] = nv
		return arr, nil
	}
	if step.isIndex {
		arr, ok := cur.([]any)
		if !ok && cur != nil {
			return nil, fmt.Errorf("cannot set %s: %s is %s, not an array", p, p[:i], jsonKind(cur))
		}
		if step.index > len(arr) {
			return nil, fmt.Errorf("cannot set %s: %s has %d item(s), so index %d would leave a gap", p, p[:i], len(arr), step.index)
		}
		var child any
		if step.index < len(arr) {
			child = arr[step.index]
		}
		nv, err := p.setIn(child, i+1, v)
		if err != nil {
			return nil, err
		}
		if step.index == len(arr) {
			return append(arr, nv), nil
		}
		arr[step.index] = nv
		return arr, nil
	}
	obj, ok := cur.(map[string]any)
	if !ok {
		if cur != nil {
			return nil, fmt.Errorf("cannot set %s: %s is %s, not an object", p, p[:i], jsonKind(cur))
		}
		obj = map[string]any{}
	}
	nv, err := p.setIn(obj[step.key], i+1, v)
	if err != nil {
		return nil, err
	}
	obj[step.key] = nv
	return obj, nil
}

// Delete removes the value at p from m: a property is deleted from its
// object, an array item (by index or selector) removed from its array.
// A path that names nothing is not an error: the value is gone already.
func (p Path) Delete(m map[string]any) error {
	if len(p) == 0 {
		return errors.New("is empty")
	}
	parent, last := p[:len(p)-1], p[len(p)-1]
	var container any = m
	if len(parent) > 0 {
		v, ok := parent.Get(m)
		if !ok {
			return nil
		}
		container = v
	}
	switch c := container.(type) {
	case map[string]any:
		if !last.isIndex && !last.isSelector {
			delete(c, last.key)
		}
		return nil
	case []any:
		i := last.index
		if last.isSelector {
			j, err := p.pick(c, len(p)-1)
			if err != nil {
				return nil
			}
			i = j
		}
		if !last.isIndex && !last.isSelector || i >= len(c) {
			return nil
		}
		return parent.Set(m, append(c[:i:i], c[i+1:]...))
	}
	return nil
}

// get returns the value at p in m, and whether there is one.
func (p Path) Get(m map[string]any) (any, bool) {
	var cur any = m
	for i, step := range p {
		if step.isSelector {
			arr, _ := cur.([]any)
			j, err := p.pick(arr, i)
			if err != nil {
				return nil, false
			}
			cur = arr[j]
			continue
		}
		if step.isIndex {
			arr, ok := cur.([]any)
			if !ok || step.index >= len(arr) {
				return nil, false
			}
			cur = arr[step.index]
			continue
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[step.key]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// SetPath parses path and stores v there in m (see [Path.set]).
func SetPath(m map[string]any, path string, v any) error {
	p, err := ParsePath(path)
	if err != nil {
		return err
	}
	return p.Set(m, v)
}

// GetPath parses path and returns the value there in m, and whether there
// is one; a path that does not parse has none.
func GetPath(m map[string]any, path string) (any, bool) {
	p, err := ParsePath(path)
	if err != nil {
		return nil, false
	}
	return p.Get(m)
}

// UnderPath reports whether the error field name field is prefix or a
// location inside it, and returns what follows prefix ("", ".count", "[0]").
func UnderPath(field, prefix string) (rest string, ok bool) {
	rest, ok = strings.CutPrefix(field, prefix)
	if !ok || (rest != "" && rest[0] != '.' && rest[0] != '[') {
		return "", false
	}
	return rest, true
}

// DeepCopy copies the objects and arrays of a decoded JSON value, so
// changing the copy leaves v alone. Other values are shared: they are
// immutable.
func DeepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = DeepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = DeepCopy(e)
		}
		return out
	default:
		return v
	}
}

// jsonKind names a decoded JSON value's type for an error message.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	default:
		return "a number"
	}
}
