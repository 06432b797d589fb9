package adapter

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	// adapterName matches internal/adapterstatus: the name is a path segment.
	adapterName = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$`)
	// identifier is what a param, capture or resource may be called: CEL
	// reads it as a variable (or resources.<name>), templates as .name.
	identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Operators of a precondition's conditions, and whether each takes value,
// values or neither.
const (
	opEquals             = "equals"
	opNotEquals          = "notEquals"
	opIn                 = "in"
	opNotIn              = "notIn"
	opContains           = "contains"
	opGreaterThan        = "greaterThan"
	opGreaterThanOrEqual = "greaterThanOrEqual"
	opLessThan           = "lessThan"
	opLessThanOrEqual    = "lessThanOrEqual"
	opExists             = "exists"
	opNotExists          = "notExists"
)

type operand int

const (
	operandValue operand = iota
	operandValues
	operandNone
)

var operators = map[string]operand{
	opEquals: operandValue, opNotEquals: operandValue, opContains: operandValue,
	opGreaterThan: operandValue, opGreaterThanOrEqual: operandValue,
	opLessThan: operandValue, opLessThanOrEqual: operandValue,
	opIn: operandValues, opNotIn: operandValues,
	opExists: operandNone, opNotExists: operandNone,
}

// propagationPolicies are the values Kubernetes accepts; an empty one
// means Background.
var propagationPolicies = []metav1.DeletionPropagation{
	metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan,
}

// validateShape checks what needs no compiling: required fields, names,
// operators, policies, manifests and discovery. Expressions, templates and
// the deletion order are checked by compile.
func validateShape(cfg *Config, ps *problems) {
	if cfg.Adapter.Name == "" {
		ps.add("adapter.name", "is required")
	} else if !adapterName.MatchString(cfg.Adapter.Name) {
		ps.add("adapter.name", "%q: want 1 to 63 lower-case letters, digits, '.' or '-', starting and ending with a letter or digit", cfg.Adapter.Name)
	}
	if len(cfg.ServiceTypes) == 0 {
		ps.add("service_types", "is required: name at least one service type")
	}
	for i, st := range cfg.ServiceTypes {
		if st == "" {
			ps.add(fmt.Sprintf("service_types[%d]", i), "is empty")
		}
	}
	names := map[string]string{} // param and capture names → where declared
	for i, p := range cfg.Params {
		validateParam(fmt.Sprintf("params[%d]", i), p, names, ps)
	}
	seen := map[string]bool{}
	for i, pc := range cfg.Preconditions {
		validatePrecondition(fmt.Sprintf("preconditions[%d]", i), pc, seen, names, ps)
	}
	if len(cfg.Resources) == 0 {
		ps.add("resources", "is required: declare at least one resource")
	}
	seen = map[string]bool{}
	for i, r := range cfg.Resources {
		field := fmt.Sprintf("resources[%d]", i)
		checkName(field+".name", r.Name, "resource", seen, ps)
		validateManifest(field+".manifest", r.Manifest, ps)
		validateDiscovery(field+".discovery", r.Discovery, ps)
		validateDeleteOptions(field+".delete_options", r.DeleteOptions, ps)
	}
	seen = map[string]bool{}
	for i, c := range cfg.Post.Conditions {
		field := fmt.Sprintf("post.conditions[%d]", i)
		switch {
		case c.Type == "":
			ps.add(field+".type", "is required")
		case seen[c.Type]:
			ps.add(field+".type", "%q is overridden twice", c.Type)
		}
		seen[c.Type] = true
		if c.Status.Expression == "" && c.Status.Literal != nil {
			if s := statusLiteral(c.Status.Literal); s != "True" && s != "False" && s != "Unknown" {
				ps.add(field+".status", `want "True", "False", "Unknown" or {expression: ...}`)
			}
		}
		for _, v := range []struct {
			name string
			v    Value
		}{{"reason", c.Reason}, {"message", c.Message}} {
			if _, ok := v.v.Literal.(string); v.v.Literal != nil && !ok {
				ps.add(field+"."+v.name, "want a string or {expression: ...}")
			}
		}
	}
}

func validateParam(field string, p Param, names map[string]string, ps *problems) {
	declare(field+".name", p.Name, names, ps)
	s := p.Source
	switch {
	case s.bad != "":
		ps.add(field+".source", "%s", s.bad)
	case s.APICall != nil && s.Expression != "":
		ps.add(field+".source", "set one of api_call and expression, not both")
	case s.APICall != nil:
		validateAPICall(field+".source.api_call", *s.APICall, ps)
	case s.Expression != "":
	case s.Path == "":
		ps.add(field+".source", "is required")
	default:
		head, rest, _ := strings.Cut(s.Path, ".")
		switch {
		case head == "event" || head == "env":
			if rest == "" {
				ps.add(field+".source", "%q: want %s.<%s>", s.Path, head, map[string]string{"event": "path", "env": "VAR"}[head])
			} else if _, err := splitPath(rest); err != nil && head == "event" {
				ps.add(field+".source", "%v", err)
			}
		case names[head] == "" || strings.HasPrefix(names[head], field+"."):
			ps.add(field+".source", "%q: want event.<path>, env.<VAR> or <earlier param>.<path>", s.Path)
		case rest != "":
			if _, err := splitPath(rest); err != nil {
				ps.add(field+".source", "%v", err)
			}
		}
	}
}

func validatePrecondition(field string, pc Precondition, seen map[string]bool, names map[string]string, ps *problems) {
	switch {
	case pc.Name == "":
		ps.add(field+".name", "is required")
	case seen[pc.Name]:
		ps.add(field+".name", "precondition %q is declared twice", pc.Name)
	}
	seen[pc.Name] = true
	if pc.APICall == nil && len(pc.Conditions) == 0 && pc.Expression == "" {
		ps.add(field, "set at least one of api_call, conditions and expression")
	}
	if pc.APICall != nil {
		validateAPICall(field+".api_call", *pc.APICall, ps)
	}
	if len(pc.Capture) > 0 && pc.APICall == nil {
		ps.add(field+".capture", "needs an api_call to capture from")
	}
	for i, c := range pc.Capture {
		cf := fmt.Sprintf("%s.capture[%d]", field, i)
		declare(cf+".name", c.Name, names, ps)
		switch {
		case c.Field == "" && c.Expression == "":
			ps.add(cf, "set one of field and expression")
		case c.Field != "" && c.Expression != "":
			ps.add(cf, "set one of field and expression, not both")
		case c.Field != "":
			if _, err := splitPath(c.Field); err != nil {
				ps.add(cf+".field", "%v", err)
			}
		}
	}
	for i, c := range pc.Conditions {
		cf := fmt.Sprintf("%s.conditions[%d]", field, i)
		if c.Field == "" {
			ps.add(cf+".field", "is required")
		} else if path, err := splitPath(c.Field); err != nil {
			ps.add(cf+".field", "%v", err)
		} else if names[path[0]] == "" {
			ps.add(cf+".field", "%q: %q is not a param or capture declared before it", c.Field, path[0])
		}
		want, ok := operators[c.Operator]
		if !ok {
			ps.add(cf+".operator", "%q: want one of equals, notEquals, in, notIn, contains, greaterThan, greaterThanOrEqual, lessThan, lessThanOrEqual, exists, notExists", c.Operator)
			continue
		}
		switch {
		case want == operandValue && (c.Value == nil || c.Values != nil):
			ps.add(cf, "operator %s takes value (not values)", c.Operator)
		case want == operandValues && (c.Values == nil || c.Value != nil):
			ps.add(cf, "operator %s takes values (a list; not value)", c.Operator)
		case want == operandNone && (c.Value != nil || c.Values != nil):
			ps.add(cf, "operator %s takes neither value nor values", c.Operator)
		}
	}
}

func validateAPICall(field string, c APICall, ps *problems) {
	if c.Method != "" && c.Method != http.MethodGet {
		ps.add(field+".method", "%q: only GET is allowed (a redelivered event must not repeat a write)", c.Method)
	}
	if c.URL == "" {
		ps.add(field+".url", "is required")
	} else if !strings.HasPrefix(c.URL, "/") && !strings.HasPrefix(c.URL, "{{") {
		ps.add(field+".url", "%q: want a path relative to the Steward API base URL, starting with /", c.URL)
	}
	if c.Timeout.bad != "" {
		ps.add(field+".timeout", "%s", c.Timeout.bad)
	} else if c.Timeout.Duration < 0 {
		ps.add(field+".timeout", "must not be negative")
	}
}

func validateManifest(field string, m map[string]any, ps *problems) {
	if m == nil {
		ps.add(field, "is required")
		return
	}
	for _, k := range []string{"apiVersion", "kind"} {
		s, ok := m[k].(string)
		switch {
		case !ok || s == "":
			ps.add(field+"."+k, "is required")
		case strings.Contains(s, "{{"):
			ps.add(field+"."+k, "must be literal: discovery and deletion need the kind before any event")
		}
	}
	meta, ok := m["metadata"].(map[string]any)
	if !ok {
		ps.add(field+".metadata", "is required")
		return
	}
	if name, ok := meta["name"].(string); !ok || name == "" {
		ps.add(field+".metadata.name", "is required")
	}
	if _, ok := meta["generateName"]; ok {
		ps.add(field+".metadata.generateName", "is not allowed: server-side apply and discovery need a fixed name")
	}
}

func validateDiscovery(field string, d Discovery, ps *problems) {
	bySel := d.BySelectors != nil
	switch {
	case d.ByName == "" && !bySel:
		ps.add(field, "is required: set by_name or by_selectors.label_selector")
	case d.ByName != "" && bySel:
		ps.add(field, "set one of by_name and by_selectors, not both")
	case bySel && len(d.BySelectors.LabelSelector) == 0:
		ps.add(field+".by_selectors.label_selector", "is required: name at least one label")
	}
}

func validateDeleteOptions(field string, d DeleteOptions, ps *problems) {
	if d.PropagationPolicy != "" && !slices.Contains(propagationPolicies, metav1.DeletionPropagation(d.PropagationPolicy)) {
		ps.add(field+".propagation_policy", "%q: want Background, Foreground or Orphan", d.PropagationPolicy)
	}
	if d.Retain && d.PropagationPolicy != "" {
		ps.add(field+".propagation_policy", "does not apply: retain: true never deletes the resource")
	}
	if d.Retain && len(d.After) > 0 {
		ps.add(field+".after", "does not apply: retain: true never deletes the resource")
	}
}

// declare records a param or capture name, which share one namespace.
func declare(field, name string, names map[string]string, ps *problems) {
	switch {
	case name == "":
		ps.add(field, "is required")
		return
	case !identifier.MatchString(name):
		ps.add(field, "%q: want an identifier (letters, digits, _; not starting with a digit)", name)
	case reservedNames[name]:
		ps.add(field, "%q is reserved", name)
	case names[name] != "":
		ps.add(field, "%q is already declared at %s", name, names[name])
		return
	}
	names[name] = field
}

func checkName(field, name, what string, seen map[string]bool, ps *problems) {
	switch {
	case name == "":
		ps.add(field, "is required")
	case !identifier.MatchString(name):
		ps.add(field, "%q: want an identifier (letters, digits, _; not starting with a digit)", name)
	case seen[name]:
		ps.add(field, "%s %q is declared twice", what, name)
	}
	seen[name] = true
}

// statusLiteral reads a literal condition status. YAML reads an unquoted
// True or False as a bool, which an author means as the string.
func statusLiteral(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return x
	}
	return ""
}
