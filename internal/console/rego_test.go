package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
)

// Issue 25: the Rego editor tests a policy against a request as a draft
// (in place of the stored one, or joining the chain) without storing it:
// its patch, its rejection, or Rego that does not compile, each shown;
// Save stores it.
func TestConsole_RegoEditorTestsDraftsAndSaves(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider, c.ProcessProviderNoOp = true, true })
	waitForProvider(t, s)
	b := newBrowser(t, s.URL())
	if p := b.get("/ui/policies/new/edit"); p.status != http.StatusOK || !strings.Contains(p.body, `<textarea id="rego_code"`) {
		t.Fatalf("new policy editor: %d", p.status)
	}
	form := func(rego string) url.Values {
		return url.Values{"csrf": {b.csrf()}, "display_name": {"always restart"}, "policy_type": {"GLOBAL"},
			"priority": {"10"}, "label_selector": {"{}"}, "enabled": {"true"}, "rego_code": {rego}, "new_id": {"always"},
			"test_request": {`{"spec": {"service_type": "container", "restart_policy": "never"}, "labels": {}}`}}
	}
	patch := "package always\nmain := {\"patch\": {\"restart_policy\": \"always\"}}"
	p := b.post("/ui/policies/new/test", form(patch))
	if p.status != http.StatusOK || !strings.Contains(p.body, `<tr class="differs"><td>restart_policy</td><td>&#34;never&#34;</td><td>&#34;always&#34;</td></tr>`) {
		t.Errorf("test a patching draft: %d, want the patch shown: %s", p.status, p.body)
	}
	if p := b.post("/ui/policies/new/test", form("package broken\nmain := {")); p.status != http.StatusBadRequest ||
		!strings.Contains(p.body, "INVALID_POLICY") {
		t.Errorf("test Rego that does not compile: %d, want the API's 400 INVALID_POLICY", p.status)
	}
	reject := "package no\nmain := {\"rejected\": true, \"rejection_reason\": \"not today\"}"
	if p := b.post("/ui/policies/new/test", form(reject)); p.status != http.StatusOK || !strings.Contains(p.body, "Rejected:") ||
		!strings.Contains(p.body, "not today") {
		t.Errorf("test a rejecting draft: %d, want the rejection and its reason", p.status)
	}
	var list struct {
		Results []any `json:"results"`
	}
	s.Do(t, "GET", "/api/v1/policies", nil).Want(t, http.StatusOK).JSON(t, &list)
	if len(list.Results) != 0 {
		t.Fatalf("tests stored %d policies, want none", len(list.Results))
	}

	if p := b.post("/ui/policies/new/edit", form(reject)); p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/policies/always/edit" {
		t.Fatalf("save: %d to %q: %s", p.status, p.header.Get("Location"), p.body)
	}
	// The stored policy rejects; a draft of it that patches replaces it in
	// the test, and the stored one is unchanged.
	if p := b.post("/ui/policies/always/test", form(patch)); !strings.Contains(p.body, "change this request") {
		t.Errorf("test a draft of a stored policy: %s", p.body)
	}
	if p := b.get("/ui/policies/always/edit"); !strings.Contains(p.body, "not today") {
		t.Error("the stored policy changed without Save")
	}
}
