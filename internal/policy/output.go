package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The members of main's answer (the Rego contract), and DCM's names for
// them. A DCM policy runs unchanged: selected_agent is selected_provider,
// and service_provider_constraints (DCM's policy manager) and
// agent_constraints (DCM's later control plane) are provider_constraints.
const (
	keyRejected                   = "rejected"
	keyRejectionReason            = "rejection_reason"
	keyPatch                      = "patch"
	keyConstraints                = "constraints"
	keySelectedProvider           = "selected_provider"
	keySelectedAgent              = "selected_agent"
	keyProviderConstraints        = "provider_constraints"
	keyServiceProviderConstraints = "service_provider_constraints"
	keyAgentConstraints           = "agent_constraints"
)

// outputKeys are the members main may answer; any other is refused, at
// create when it is visible in the code and at run time otherwise: a
// member Steward does not understand could be a restriction it would
// silently drop.
var outputKeys = []string{keyRejected, keyRejectionReason, keyPatch, keyConstraints, keySelectedProvider,
	keySelectedAgent, keyProviderConstraints, keyServiceProviderConstraints, keyAgentConstraints}

// providerConstraintKeys are the members of a provider constraints object:
// Steward's and DCM's (pattern is DCM's older single pattern,
// environment_constraints its agent environments).
var providerConstraintKeys = []string{"allow_list", "patterns", "pattern", "globs", "metadata", "environment_constraints"}

// UnknownKeyError is a member of main's answer that is not in the Rego
// contract. It is a cause of an [*EvaluationError] (500), or of an
// [*InvalidPolicyError] when create sees it in the code.
type UnknownKeyError struct {
	// Key is the member's path in main's answer ("colour",
	// "provider_constraints.alow_list").
	Key string
	// Known lists the members allowed where Key is.
	Known []string
}

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("main.%s is not part of the policy contract (allowed: %s)", e.Key, strings.Join(e.Known, ", "))
}

// output is the Rego contract's answer: what a policy's main evaluates to.
type output struct {
	Rejected         bool
	RejectionReason  string
	Patch            map[string]any
	Constraints      map[string]any
	SelectedProvider string
	// ProviderConstraints holds one entry per constraints member present
	// (provider_constraints and its DCM aliases), each applied in turn.
	ProviderConstraints []ProviderConstraints
}

// parseOutput reads main's value as OPA returns it (map[string]any, []any,
// json.Number, ...), refusing members of the wrong type and members the
// contract does not know. null counts as absent.
func parseOutput(v any) (output, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return output{}, fmt.Errorf("main is %s, not an object", jsonKind(v))
	}
	var out output
	var selectedBy string
	// Sorted, so that the error a policy gets does not vary from run to run
	// (on the stack: main has a handful of members).
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m[k]
		if v == nil {
			continue
		}
		var err error
		switch k {
		case keyRejected:
			out.Rejected, err = as[bool](k, v)
		case keyRejectionReason:
			out.RejectionReason, err = as[string](k, v)
		case keyPatch:
			out.Patch, err = as[map[string]any](k, v)
		case keyConstraints:
			out.Constraints, err = as[map[string]any](k, v)
		case keySelectedProvider, keySelectedAgent:
			var name string
			if name, err = as[string](k, v); err == nil && name != "" {
				if out.SelectedProvider != "" && out.SelectedProvider != name {
					err = fmt.Errorf("main.%s %q and main.%s %q name different providers", selectedBy, out.SelectedProvider, k, name)
				}
				out.SelectedProvider, selectedBy = name, k
			}
		case keyProviderConstraints, keyServiceProviderConstraints, keyAgentConstraints:
			var pc ProviderConstraints
			if pc, err = parseProviderConstraints(k, v); err == nil {
				out.ProviderConstraints = append(out.ProviderConstraints, pc)
			}
		default:
			err = &UnknownKeyError{Key: k, Known: outputKeys}
		}
		if err != nil {
			return output{}, err
		}
	}
	return out, nil
}

func parseProviderConstraints(field string, v any) (ProviderConstraints, error) {
	m, err := as[map[string]any](field, v)
	if err != nil {
		return ProviderConstraints{}, err
	}
	var pc ProviderConstraints
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, path := m[k], field+"."+k
		switch k {
		case "allow_list":
			pc.AllowList, err = stringList(path, v)
		case "patterns":
			var more []string
			if more, err = stringList(path, v); err == nil {
				pc.Patterns = append(pc.Patterns, more...)
			}
		case "pattern":
			if v != nil {
				var p string
				if p, err = as[string](path, v); err == nil && p != "" {
					pc.Patterns = append(pc.Patterns, p)
				}
			}
		case "globs":
			pc.Globs, err = stringList(path, v)
		case "metadata":
			pc.Metadata, err = stringMap(path, v)
		case "environment_constraints":
			pc.Environments, pc.EnvironmentPatterns, err = parseEnvironments(path, v)
		default:
			err = &UnknownKeyError{Key: path, Known: providerConstraintKeys}
		}
		if err != nil {
			return ProviderConstraints{}, err
		}
	}
	return pc, checkProviderConstraints(field, pc)
}

// parseEnvironments reads DCM's environment_constraints: a list of
// environments, or an object {allow_list, patterns}.
func parseEnvironments(field string, v any) (allow, patterns []string, err error) {
	if v == nil {
		return nil, nil, nil
	}
	if _, isList := v.([]any); isList {
		allow, err = stringList(field, v)
		return allow, nil, err
	}
	m, err := as[map[string]any](field, v)
	if err != nil {
		return nil, nil, fmt.Errorf("main.%s must be an array or an object, not %s", field, jsonKind(v))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "allow_list":
			allow, err = stringList(field+".allow_list", m[k])
		case "patterns":
			patterns, err = stringList(field+".patterns", m[k])
		default:
			err = &UnknownKeyError{Key: field + "." + k, Known: []string{"allow_list", "patterns"}}
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return allow, patterns, nil
}

// checkProviderConstraints refuses regular expressions and globs that do
// not compile: a malformed one would match nothing and exclude every
// provider for a reason nobody could see.
func checkProviderConstraints(field string, pc ProviderConstraints) error {
	var errs []error
	for _, p := range slices.Concat(pc.Patterns, pc.EnvironmentPatterns) {
		if _, err := compileRE2(p); err != nil {
			errs = append(errs, fmt.Errorf("main.%s: %q is not an RE2 regular expression: %w", field, p, err))
		}
	}
	for _, g := range pc.Globs {
		if _, err := pathMatch(g); err != nil {
			errs = append(errs, fmt.Errorf("main.%s.globs: %q: %w", field, g, err))
		}
	}
	return errors.Join(errs...)
}

func stringMap(field string, v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	obj, err := as[map[string]any](field, v)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		if out[k], err = as[string](field+"."+k, v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func stringList(field string, v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, err := as[[]any](field, v)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(list))
	for i, e := range list {
		if out[i], err = as[string](fmt.Sprintf("%s[%d]", field, i), e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// as asserts that main's member field holds a T.
func as[T any](field string, v any) (T, error) {
	t, ok := v.(T)
	if !ok {
		var want T
		return t, fmt.Errorf("main.%s must be %s, not %s", field, jsonKind(want), jsonKind(v))
	}
	return t, nil
}

// jsonKind names a JSON value's type.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return "a number"
}
