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
	pv, shown, err := c.evaluate(r, s, spec, nil, nil)
	if err != nil {
		return err
	}
	showEvaluation(w, data, pv, shown)
	c.render(w, "orderform", s, data)
	return nil
}

// evaluate runs the policy chain (with drafts, if any) on a request, with
// placement's dry run, and says what it did: a preview (a rejection is
// one), or the API's error when it is the request's or a draft's fault (a
// 4xx but 401, or a draft's Rego failing at evaluation). Anything else is
// err.
func (c *Console) evaluate(r *http.Request, s *session, spec map[string]any, labels map[string]string,
	drafts []any) (preview, *apiError, error) {
	var answer struct {
		Evaluated struct {
			Spec map[string]any `json:"spec"`
		} `json:"evaluated_service_instance"`
		SelectedProvider string `json:"selected_provider"`
		SelectedBy       string `json:"selected_by"`
		Status           string `json:"status"`
	}
	req := map[string]any{"service_instance": map[string]any{"spec": spec, "labels": cmpNil(labels)},
		"dry_run_placement": true}
	if len(drafts) > 0 {
		req["policies"] = drafts
	}
	err := c.call(r, s, http.MethodPost, "/api/v1/policies:evaluateRequest", req, &answer)
	var apiErr *apiError
	switch {
	case err == nil:
		return preview{Provider: answer.SelectedProvider, SelectedBy: answer.SelectedBy, Status: answer.Status,
			Changes: specChanges(spec, answer.Evaluated.Spec)}, &apiError{}, nil
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusNotAcceptable:
		return preview{Rejected: true, Reason: apiErr.Detail}, &apiError{}, nil
	}
	if e, ok := refusal(err); ok {
		return preview{}, e, nil
	}
	if errors.As(err, &apiErr) && apiErr.Reason == "POLICY_EVALUATION_FAILED" {
		return preview{}, apiErr, nil // a draft's Rego failed
	}
	return preview{}, nil, err
}

// showEvaluation puts what evaluate said on the page: the API's error
// (with its status) or the preview.
func showEvaluation(w http.ResponseWriter, data map[string]any, pv preview, shown *apiError) {
	if shown.Status != 0 {
		data["Error"] = shown
		w.WriteHeader(shown.Status)
		return
	}
	data["Preview"] = pv
}

func cmpNil(labels map[string]string) map[string]string {
	if labels == nil {
		return map[string]string{}
	}
	return labels
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
