package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
)

// policyForm is the Rego editor's form: a policy as the API takes it, and
// the request a test runs it against.
type policyForm struct {
	ID, DisplayName, PolicyType, LabelSelector, Rego, TestRequest string
	Priority                                                      int
	Enabled                                                       bool
}

// defaultTestRequest is the request a new test starts from.
const defaultTestRequest = `{"spec": {"service_type": "container", "restart_policy": "never"}, "labels": {}}`

// regoPage shows a policy ("new": an empty one) in the Rego editor.
func (c *Console) regoPage(w http.ResponseWriter, r *http.Request, s *session) error {
	id := r.PathValue("id")
	f := policyForm{ID: id, PolicyType: "GLOBAL", Priority: 10, Enabled: true, LabelSelector: "{}",
		Rego: "package mypolicy\n\nmain := {}\n", TestRequest: defaultTestRequest}
	if id != "new" {
		var p struct {
			policyRow
			Rego string `json:"rego_code"`
		}
		if err := c.call(r, s, http.MethodGet, "/api/v1/policies/"+url.PathEscape(id), nil, &p); err != nil {
			return err
		}
		sel, _ := json.Marshal(p.LabelSelector) // a map of strings always encodes
		f = policyForm{ID: id, DisplayName: p.DisplayName, PolicyType: p.PolicyType, Priority: p.Priority,
			Enabled: p.Enabled, LabelSelector: string(sel), Rego: p.Rego, TestRequest: defaultTestRequest}
	}
	c.render(w, "rego", s, map[string]any{"Form": f, "Admin": c.isAdmin(r, s)})
	return nil
}

// readPolicyForm reads the editor's form into the API's policy body.
func readPolicyForm(r *http.Request) (policyForm, map[string]any, error) {
	f := policyForm{ID: r.PathValue("id"), DisplayName: trimmed(r, "display_name"), PolicyType: trimmed(r, "policy_type"),
		LabelSelector: trimmed(r, "label_selector"), Rego: r.PostFormValue("rego_code"),
		TestRequest: trimmed(r, "test_request"), Enabled: r.PostFormValue("enabled") == "true"}
	var err error
	if f.Priority, err = strconv.Atoi(trimmed(r, "priority")); err != nil {
		return f, nil, errors.New("priority: a whole number")
	}
	var selector map[string]string
	if f.LabelSelector != "" {
		if err := json.Unmarshal([]byte(f.LabelSelector), &selector); err != nil {
			return f, nil, errors.New(`label selector: a JSON object of strings, such as {"service_type": "vm"}`)
		}
	}
	body := map[string]any{"display_name": f.DisplayName, "policy_type": f.PolicyType, "priority": f.Priority,
		"label_selector": selector, "rego_code": f.Rego, "enabled": f.Enabled}
	return f, body, nil
}

// saveRego creates or changes the policy; a refusal shows on the editor.
func (c *Console) saveRego(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := checkCSRF(r, s); err != nil {
		return err
	}
	f, body, err := readPolicyForm(r)
	data := map[string]any{"Form": f, "Admin": true}
	if err != nil {
		data["Error"] = &apiError{Status: http.StatusBadRequest, Reason: "INVALID_ARGUMENT", Detail: err.Error()}
		w.WriteHeader(http.StatusBadRequest)
		c.render(w, "rego", s, data)
		return nil
	}
	method, path := http.MethodPatch, "/api/v1/policies/"+url.PathEscape(f.ID)
	if f.ID == "new" {
		method, path = http.MethodPost, query("/api/v1/policies", map[string]string{"id": trimmed(r, "new_id")})
	}
	var saved struct {
		ID string `json:"id"`
	}
	err = c.call(r, s, method, path, body, &saved)
	if apiErr, ok := refusal(err); ok {
		data["Error"] = apiErr
		w.WriteHeader(apiErr.Status)
		c.render(w, "rego", s, data)
		return nil
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/ui/policies/"+url.PathEscape(saved.ID)+"/edit", http.StatusSeeOther)
	return nil
}

// testRego runs the policy chain, with the editor's policy as a draft in
// place of the stored one (or joining the chain), against the test request,
// and shows what it did; nothing is stored.
func (c *Console) testRego(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := checkCSRF(r, s); err != nil {
		return err
	}
	f, draft, err := readPolicyForm(r)
	data := map[string]any{"Form": f, "Admin": true}
	var request struct {
		Spec   map[string]any    `json:"spec"`
		Labels map[string]string `json:"labels"`
	}
	if err == nil && json.Unmarshal([]byte(f.TestRequest), &request) != nil {
		err = errors.New(`test request: a JSON object, {"spec": {…}, "labels": {…}}`)
	}
	if err != nil {
		data["Error"] = &apiError{Status: http.StatusBadRequest, Reason: "INVALID_ARGUMENT", Detail: err.Error()}
		w.WriteHeader(http.StatusBadRequest)
		c.render(w, "rego", s, data)
		return nil
	}
	if f.ID != "new" {
		draft["id"] = f.ID
	}
	pv, shown, err := c.evaluate(r, s, request.Spec, request.Labels, []any{draft})
	if err != nil {
		return err
	}
	showEvaluation(w, data, pv, shown)
	c.render(w, "rego", s, data)
	return nil
}
