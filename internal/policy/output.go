package policy

import (
	"fmt"
)

// output is the Rego contract's answer: what a policy's main evaluates to.
// Members it does not know are ignored.
type output struct {
	Rejected            bool
	RejectionReason     string
	Patch               map[string]any
	Constraints         map[string]any
	SelectedProvider    string
	ProviderConstraints *ProviderConstraints
}

// parseOutput reads main's value as OPA returns it (map[string]any, []any,
// json.Number, ...), refusing members of the wrong type. null counts as
// absent.
func parseOutput(v any) (output, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return output{}, fmt.Errorf("main is %s, not an object", jsonKind(v))
	}
	var out output
	var err error
	for k, v := range m {
		if v == nil {
			continue
		}
		switch k {
		case "rejected":
			out.Rejected, err = as[bool](k, v)
		case "rejection_reason":
			out.RejectionReason, err = as[string](k, v)
		case "patch":
			out.Patch, err = as[map[string]any](k, v)
		case "constraints":
			out.Constraints, err = as[map[string]any](k, v)
		case "selected_provider":
			out.SelectedProvider, err = as[string](k, v)
		case "provider_constraints":
			out.ProviderConstraints, err = parseProviderConstraints(v)
		}
		if err != nil {
			return output{}, err
		}
	}
	return out, nil
}

func parseProviderConstraints(v any) (*ProviderConstraints, error) {
	m, err := as[map[string]any]("provider_constraints", v)
	if err != nil {
		return nil, err
	}
	var pc ProviderConstraints
	if pc.AllowList, err = stringList("provider_constraints.allow_list", m["allow_list"]); err != nil {
		return nil, err
	}
	if pc.Patterns, err = stringList("provider_constraints.patterns", m["patterns"]); err != nil {
		return nil, err
	}
	if meta, ok := m["metadata"]; ok && meta != nil {
		obj, err := as[map[string]any]("provider_constraints.metadata", meta)
		if err != nil {
			return nil, err
		}
		pc.Metadata = make(map[string]string, len(obj))
		for k, v := range obj {
			if pc.Metadata[k], err = as[string]("provider_constraints.metadata."+k, v); err != nil {
				return nil, err
			}
		}
	}
	return &pc, nil
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
