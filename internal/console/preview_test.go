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

// Issue 25: Preview on the order form runs the policy chain on the order
// the form describes without ordering it: the fields a policy patches
// (asked and after), the provider chosen and by what, or a rejection with
// the policy's reason; refused without the CSRF token.
func TestConsole_PreviewShowsWhatThePoliciesWouldDo(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider, c.ProcessProviderNoOp = true, true })
	waitForProvider(t, s)
	for id, rego := range map[string]string{
		"no-never": "package nonever\nmain := {\"rejected\": true, \"rejection_reason\": \"processes must restart\"} if { input.spec.restart_policy == \"never\" }",
		"always":   "package always\nmain := {\"patch\": {\"restart_policy\": \"always\"}} if { input.spec.restart_policy == \"on_failure\" }",
	} {
		s.Do(t, "POST", "/api/v1/policies?id="+id, map[string]any{"display_name": id, "policy_type": "GLOBAL",
			"priority": map[string]int{"no-never": 1, "always": 2}[id], "rego_code": rego}).Want(t, http.StatusCreated)
	}
	b := newBrowser(t, s.URL())
	if form := b.get("/ui/catalog/sleeper/order"); !strings.Contains(form.body, `formaction="/ui/catalog/sleeper/preview"`) {
		t.Fatal("the order form has no Preview button")
	}

	p := b.post("/ui/catalog/sleeper/preview", url.Values{"csrf": {b.csrf()}, "order_id": {"previewed"}, "f0": {`["600"]`}})
	if p.status != http.StatusOK {
		t.Fatalf("preview: %d %s", p.status, p.body)
	}
	for _, want := range []string{`<h2 id="preview-title">Preview</h2>`, "change this request", "<strong>process-sp</strong>",
		"chosen by the default rule", `<tr class="differs"><td>restart_policy</td><td>&#34;on_failure&#34;</td><td>&#34;always&#34;</td></tr>`,
		`value="previewed"`, `[&#34;600&#34;]`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the preview does not show %q", want)
		}
	}
	if strings.Contains(p.body, "<td>process.args</td>") {
		t.Error("the preview lists a field no policy changed")
	}

	p = b.post("/ui/catalog/sleeper/preview", url.Values{"csrf": {b.csrf()}, "f1": {"never"}})
	if p.status != http.StatusOK || !strings.Contains(p.body, "Rejected:") || !strings.Contains(p.body, "processes must restart") {
		t.Errorf("preview of what a policy rejects: %d, want the rejection and its reason: %s", p.status, p.body)
	}

	if p := b.post("/ui/catalog/sleeper/preview", url.Values{"f1": {"never"}}); p.status != http.StatusForbidden {
		t.Errorf("preview without the CSRF token: %d, want 403", p.status)
	}
	var list struct {
		Results []any `json:"results"`
	}
	s.Do(t, "GET", "/api/v1/catalog-item-instances", nil).Want(t, http.StatusOK).JSON(t, &list)
	if len(list.Results) != 0 {
		t.Errorf("previews ordered %d orders, want none", len(list.Results))
	}
}
