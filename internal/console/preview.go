package console

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// preview is what the policy chain would do to an order, shown on its form.
type preview struct {
	Rejected   bool
	Reason     string // the API's detail: the rejecting policy and its reason
	Provider   string
	SelectedBy string
	Status     string          // APPROVED or MODIFIED
	Changes    []previewChange // the fields the policies patched
}

type previewChange struct{ Path, Before, After string }

// previewOrder runs the policy chain on the order the form describes
// (policies:evaluateRequest), orders nothing, and shows the form again with
// what the policies would patch, the provider they or the default rule would
// choose, or the rejection and its reason.
func (c *Console) previewOrder(w http.ResponseWriter, r *http.Request, s *session) error {
	f, done, err := c.readOrderForm(w, r, s)
	if done || err != nil {
		return err
	}
	data := f.data
	spec := specOf(f.defaults, f.fields, f.values)
	spec["service_type"] = f.item["ServiceType"]
	var answer struct {
		Evaluated struct {
			Spec map[string]any `json:"spec"`
		} `json:"evaluated_service_instance"`
		SelectedProvider string `json:"selected_provider"`
		SelectedBy       string `json:"selected_by"`
		Status           string `json:"status"`
	}
	err = c.call(r, s, http.MethodPost, "/api/v1/policies:evaluateRequest", map[string]any{
		"service_instance": map[string]any{"spec": spec, "labels": map[string]any{}}, "dry_run_placement": true}, &answer)
	var apiErr *apiError
	isRefusal := func(err error) bool { _, ok := refusal(err); return ok }
	switch {
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusNotAcceptable:
		data["Preview"] = preview{Rejected: true, Reason: apiErr.Detail}
	case isRefusal(err):
		data["Error"], _ = refusal(err)
	case err != nil:
		return err
	default:
		data["Preview"] = preview{Provider: answer.SelectedProvider, SelectedBy: answer.SelectedBy,
			Status: answer.Status, Changes: specChanges(spec, answer.Evaluated.Spec)}
	}
	c.render(w, "orderform", s, data)
	return nil
}

// specOf is the spec an order of the form's item asks for, as the catalog
// builds it: the item's defaults, each field's default, then the values.
// Paths are dotted names (a path with an index is left to the server).
func specOf(defaults map[string]any, fields []formField, values []map[string]any) map[string]any {
	spec := deepCopy(defaults)
	for _, f := range fields {
		if f.defaultValue != nil {
			setAt(spec, f.Path, f.defaultValue)
		}
	}
	for _, v := range values {
		setAt(spec, v["path"].(string), v["value"])
	}
	return spec
}

func deepCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = deepCopy(sub)
		}
		out[k] = v
	}
	return out
}

// setAt sets v at a dotted path of names in m, making the objects on the way.
func setAt(m map[string]any, path string, v any) {
	names := strings.Split(path, ".")
	for _, name := range names[:len(names)-1] {
		next, ok := m[name].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[name] = next
		}
		m = next
	}
	m[names[len(names)-1]] = v
}

// specChanges lists the leaf fields that differ between the spec sent and
// the spec the policies made of it.
func specChanges(before, after map[string]any) []previewChange {
	b, a := map[string]string{}, map[string]string{}
	flatten("", before, b)
	flatten("", after, a)
	paths := slices.Sorted(maps.Keys(a))
	for p := range b {
		if _, ok := a[p]; !ok {
			paths = append(paths, p)
		}
	}
	var changes []previewChange
	for _, p := range paths {
		if b[p] != a[p] {
			changes = append(changes, previewChange{Path: p, Before: b[p], After: a[p]})
		}
	}
	return changes
}
