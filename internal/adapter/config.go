package adapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"time"

	"sigs.k8s.io/yaml"
)

// Config is an adapter's task config: the YAML DSL of the package doc,
// decoded. Build it with [Parse] or [Load], which check everything that can
// be checked before an event arrives; a Config built in Go is checked by
// [NewExecutor] instead (except the deletion order, which Execute checks
// and reports, as the deletion-flow seed asks).
type Config struct {
	Adapter AdapterInfo `json:"adapter"`
	// ServiceTypes are the service types whose reconcile events
	// (steward.reconcile.<service_type>) this adapter consumes.
	ServiceTypes  []string       `json:"service_types"`
	Params        []Param        `json:"params,omitempty"`
	Preconditions []Precondition `json:"preconditions,omitempty"`
	// WhenDeleting is a CEL bool, evaluated after the preconditions, that
	// switches the resources phase to deletion mode. Empty means "the
	// event's deleted_at is set".
	WhenDeleting string     `json:"when_deleting,omitempty"`
	Resources    []Resource `json:"resources"`
	Post         Post       `json:"post,omitzero"`
}

// AdapterInfo names the adapter.
type AdapterInfo struct {
	// Name is the {adapter} path segment of the status reports:
	// ^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$.
	Name string `json:"name"`
}

// Param is a named value resolved before anything else, in order, so that
// a later param may use earlier ones.
type Param struct {
	// Name is a CEL identifier, and the name templates use (.name).
	Name        string `json:"name"`
	Source      Source `json:"source"`
	Required    bool   `json:"required,omitempty"`
	Default     any    `json:"default,omitempty"`
	Description string `json:"description,omitempty"`
}

// Source is where a param's value comes from. In YAML it is either a
// string path (event.<path>, env.<VAR> or <earlier param>.<path>) or an
// object with exactly one of api_call and expression.
type Source struct {
	Path       string
	APICall    *APICall
	Expression string

	// bad says why the YAML value could not be a source; validation
	// reports it with the field path, so decoding never stops early.
	bad string
}

type sourceObject struct {
	APICall    *APICall `json:"api_call,omitempty"`
	Expression string   `json:"expression,omitempty"`
}

// UnmarshalJSON accepts a string or an object; any other shape is kept as
// a problem for validation to report.
func (s *Source) UnmarshalJSON(b []byte) error {
	*s = Source{}
	switch firstByte(b) {
	case '"':
		return json.Unmarshal(b, &s.Path)
	case '{':
		var o sourceObject
		if err := json.Unmarshal(b, &o); err != nil {
			s.bad = "want a string or an object with api_call or expression: " + err.Error()
			return nil
		}
		s.APICall, s.Expression = o.APICall, o.Expression
		return nil
	case 'n':
		return nil
	}
	s.bad = "want a string (event.<path>, env.<VAR>, <param>.<path>) or an object with api_call or expression"
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads.
func (s Source) MarshalJSON() ([]byte, error) {
	if s.APICall == nil && s.Expression == "" {
		return json.Marshal(s.Path)
	}
	return json.Marshal(sourceObject{APICall: s.APICall, Expression: s.Expression})
}

// shape is the object form's struct, for the unknown-field check.
func (Source) shape() any { return sourceObject{} }

// APICall is a call to the Steward API. Only GET is allowed: params and
// preconditions read, and a redelivered event must not repeat a write.
type APICall struct {
	// Method defaults to GET.
	Method string `json:"method,omitempty"`
	// URL is a Go template over the params (and captures so far) that
	// renders a path relative to the Steward API base URL, such as
	// /api/v1/catalog-item-instances/{{ .orderId }}.
	URL string `json:"url"`
	// Timeout bounds the call. Defaults to 10s.
	Timeout Duration `json:"timeout,omitzero"`
}

// Precondition gates the resources phase: every one must pass, in order,
// or the resources are left alone (and post reports PreconditionsNotMet).
type Precondition struct {
	Name    string    `json:"name"`
	APICall *APICall  `json:"api_call,omitempty"`
	Capture []Capture `json:"capture,omitempty"`
	// Conditions all must hold.
	Conditions []Check `json:"conditions,omitempty"`
	// Expression is a CEL bool over the params and captures.
	Expression string `json:"expression,omitempty"`
}

// Capture names a value taken from the precondition's API response: a
// dot path (Field) or a CEL expression with the response's top-level
// fields as variables (Expression).
type Capture struct {
	Name       string `json:"name"`
	Field      string `json:"field,omitempty"`
	Expression string `json:"expression,omitempty"`
	// Default is the value when Field is absent from the response.
	Default any `json:"default,omitempty"`
}

// Check is one condition of a precondition: Field (a dot path whose first
// segment is a param or capture) compared with Operator to Value or Values.
type Check struct {
	Field    string `json:"field"`
	Operator string `json:"operator"`
	Value    any    `json:"value,omitempty"`
	Values   []any  `json:"values,omitempty"`
}

// Resource is one Kubernetes object the adapter manages.
type Resource struct {
	// Name is a CEL identifier: post reads the object as resources.<name>.
	Name string `json:"name"`
	// Manifest is the object. Every string leaf is a Go template over the
	// params and captures; apiVersion and kind must be literal.
	Manifest      map[string]any `json:"manifest"`
	Discovery     Discovery      `json:"discovery"`
	DeleteOptions DeleteOptions  `json:"delete_options,omitzero"`
}

// Discovery finds the object again: by name, or by labels.
type Discovery struct {
	// Namespace defaults to the manifest's metadata.namespace.
	Namespace   string     `json:"namespace,omitempty"`
	ByName      string     `json:"by_name,omitempty"`
	BySelectors *Selectors `json:"by_selectors,omitempty"`
}

// Selectors selects objects by label equality.
type Selectors struct {
	LabelSelector map[string]string `json:"label_selector"`
}

// DeleteOptions says how deletion mode deletes the resource.
type DeleteOptions struct {
	// PropagationPolicy is Background (the default), Foreground or Orphan,
	// passed to the Kubernetes DELETE unchanged (DESIGN §4: Orphan deletes
	// the object and leaves its dependents).
	PropagationPolicy string `json:"propagation_policy,omitempty"`
	// After names resources that must be gone before this one is deleted.
	After []string `json:"after,omitempty"`
	// Retain leaves the object in place on deletion; it counts as done.
	Retain bool `json:"retain,omitempty"`
}

// Post builds the status report. It always runs, in both modes and after
// failures; the package doc gives the defaults it starts from.
type Post struct {
	// Conditions override the default conditions, per type.
	Conditions []ConditionRule `json:"conditions,omitempty"`
	// Data becomes the report's data object.
	Data map[string]Value `json:"data,omitempty"`
}

// ConditionRule overrides some fields of one condition; an empty Value
// keeps the default.
type ConditionRule struct {
	Type    string `json:"type"`
	Status  Value  `json:"status,omitzero"`
	Reason  Value  `json:"reason,omitzero"`
	Message Value  `json:"message,omitzero"`
}

// Value is a literal or, written {expression: "..."}, a CEL expression.
// An object whose only key is expression is always an expression.
type Value struct {
	Literal    any
	Expression string
}

// IsZero reports whether v is unset.
func (v Value) IsZero() bool { return v.Literal == nil && v.Expression == "" }

// UnmarshalJSON reads {expression: "..."} as an expression and anything
// else as a literal.
func (v *Value) UnmarshalJSON(b []byte) error {
	*v = Value{}
	if firstByte(b) == '{' {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err == nil && len(m) == 1 {
			if raw, ok := m["expression"]; ok {
				if err := json.Unmarshal(raw, &v.Expression); err == nil {
					return nil
				}
			}
		}
	}
	return decodeJSON(b, &v.Literal)
}

// MarshalJSON writes the form UnmarshalJSON reads.
func (v Value) MarshalJSON() ([]byte, error) {
	if v.Expression != "" {
		return json.Marshal(map[string]string{"expression": v.Expression})
	}
	return json.Marshal(v.Literal)
}

// Duration is a time.Duration written as a Go duration string ("10s").
type Duration struct {
	time.Duration
	bad string
}

// UnmarshalJSON parses a duration string; a bad one is kept as a problem
// for validation to report.
func (d *Duration) UnmarshalJSON(b []byte) error {
	*d = Duration{}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		d.bad = "want a duration such as \"10s\""
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		d.bad = fmt.Sprintf("want a duration such as \"10s\": %v", err)
		return nil
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// IsZero reports whether d is unset.
func (d Duration) IsZero() bool { return d.Duration == 0 && d.bad == "" }

// Parse decodes a YAML (or JSON) task config and checks it; the
// [*ConfigError] lists every problem with its field path. Unknown fields
// are problems, so a typo fails here instead of being silently ignored.
func Parse(data []byte) (*Config, error) {
	cfg, ps := decode(data)
	if cfg != nil {
		_, more := check(cfg, true)
		ps = append(ps, more...)
	}
	if err := ps.err(""); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Load reads and parses the task config at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load adapter config: %w", err)
	}
	cfg, err := Parse(data)
	if ce, ok := errors.AsType[*ConfigError](err); ok {
		ce.File = path
	}
	return cfg, err
}

// decode turns YAML into a Config, reporting unknown fields and wrongly
// typed values as problems rather than stopping at the first.
func decode(data []byte) (*Config, problems) {
	var ps problems
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		ps.add("(document)", "not valid YAML: %v", err)
		return nil, ps
	}
	var raw any
	if err := decodeJSON(js, &raw); err != nil {
		ps.add("(document)", "%v", err)
		return nil, ps
	}
	if _, ok := raw.(map[string]any); !ok {
		ps.add("(document)", "want a mapping at the top level")
		return nil, ps
	}
	unknownFields(raw, reflect.TypeFor[Config](), "", &ps)
	cfg := &Config{}
	if err := decodeJSON(js, cfg); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			ps.add(te.Field, "want %s, got a %s", te.Type, te.Value)
		} else {
			ps.add("(document)", "%v", err)
		}
	}
	return cfg, ps
}

// decodeJSON decodes with UseNumber, then turns numbers into int64 where
// they are integers and float64 otherwise: the types unstructured objects
// and CEL use, so `generation > 0` and a manifest's replicas keep integer
// types.
func decodeJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if p, ok := v.(*any); ok {
		*p = normalize(*p)
	}
	return nil
}

func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}
