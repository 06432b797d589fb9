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

// Issue 25: an admin defines a service type and a catalog item in the
// console's JSON editor and changes them; JSON that does not parse, and
// what the API refuses (each field it names), show above the text, which is
// kept; a built-in type is read only; a user gets the API's 403.
func TestConsole_EditServiceTypesAndCatalogItems(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.Dev, c.APIToken = false, "s3cret-admin" })
	admin := newBrowser(t, s.URL())
	admin.signIn("s3cret-admin")
	save := func(b *browser, path, definition string) page {
		t.Helper()
		return b.post(path, url.Values{"csrf": {b.csrf()}, "definition": {definition}})
	}

	if p := admin.get("/ui/service-types"); p.status != http.StatusOK || !strings.Contains(p.body, `href="/ui/service-types/vm/edit"`) {
		t.Fatalf("service types page: %d", p.status)
	}
	if p := admin.get("/ui/service-types/vm/edit"); !strings.Contains(p.body, "&#34;builtin&#34;: true") {
		t.Errorf("the editor does not show vm's definition")
	}
	if p := admin.post("/ui/service-types/new/edit", url.Values{"definition": {`{"id": "cache"}`}}); p.status != http.StatusForbidden {
		t.Errorf("save without the CSRF token: %d, want 403", p.status)
	}
	if p := save(admin, "/ui/service-types/new/edit", `{"id": "cache",`); p.status != http.StatusBadRequest ||
		!strings.Contains(p.body, "INVALID_JSON") || !strings.Contains(p.body, `{&#34;id&#34;: &#34;cache&#34;,</textarea>`) {
		t.Errorf("JSON that does not parse: %d, want 400 with the text kept: %s", p.status, p.body)
	}
	if p := save(admin, "/ui/service-types/new/edit", `{"id": "cache", "schema": {"type": "nonsense"}}`); p.status != http.StatusBadRequest ||
		!strings.Contains(p.body, "<code>schema") {
		t.Errorf("a schema the API refuses: %d, want its 400 naming the field: %s", p.status, p.body)
	}
	cache := `{"id": "cache", "schema": {"type": "object", "properties": {"size": {"type": "string", "enum": ["small", "large"]}}}}`
	if p := save(admin, "/ui/service-types/new/edit", cache); p.status != http.StatusSeeOther ||
		p.header.Get("Location") != "/ui/service-types/cache/edit?notice=Saved." {
		t.Fatalf("create a service type: %d to %q: %s", p.status, p.header.Get("Location"), p.body)
	}
	if p := save(admin, "/ui/service-types/vm/edit", `{"id": "vm", "schema": {"type": "object"}}`); p.status != http.StatusConflict ||
		!strings.Contains(p.body, "SERVICE_TYPE_READ_ONLY") {
		t.Errorf("change a built-in type: %d, want the API's 409", p.status)
	}

	item := `{"id": "small-cache", "display_name": "Small cache", "service_type": "cache", "defaults": {"size": "small"}, "fields": []}`
	if p := save(admin, "/ui/catalog/new/edit", item); p.status != http.StatusSeeOther {
		t.Fatalf("create a catalog item: %d %s", p.status, p.body)
	}
	if p := save(admin, "/ui/catalog/small-cache/edit", `{"display_name": "A small cache"}`); p.status != http.StatusSeeOther {
		t.Fatalf("change a catalog item: %d %s", p.status, p.body)
	}
	var got struct {
		DisplayName string         `json:"display_name"`
		Defaults    map[string]any `json:"defaults"`
	}
	s.Do(t, "GET", "/api/v1/catalog-items/small-cache", nil, "Authorization", "Bearer s3cret-admin").Want(t, http.StatusOK).JSON(t, &got)
	if got.DisplayName != "A small cache" || got.Defaults["size"] != "small" {
		t.Errorf("the item after its PATCH: %+v, want the new name and its defaults kept", got)
	}

	// YAML: shown with ?format=yaml, saved as JSON is, refused with its
	// parser's reason when it does not parse.
	if p := admin.get("/ui/catalog/small-cache/edit?format=yaml"); !strings.Contains(p.body, "display_name: A small cache\n") ||
		!strings.Contains(p.body, `<input type="hidden" name="format" value="yaml">`) {
		t.Errorf("the editor does not show small-cache as YAML")
	}
	p := admin.post("/ui/catalog/small-cache/edit", url.Values{"csrf": {admin.csrf()}, "format": {"yaml"},
		"definition": {"display_name: Cache, small\ndefaults:\n  size: large\n"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/catalog/small-cache/edit?format=yaml&notice=Saved." {
		t.Fatalf("save YAML: %d to %q: %s", p.status, p.header.Get("Location"), p.body)
	}
	s.Do(t, "GET", "/api/v1/catalog-items/small-cache", nil, "Authorization", "Bearer s3cret-admin").Want(t, http.StatusOK).JSON(t, &got)
	if got.DisplayName != "Cache, small" || got.Defaults["size"] != "large" {
		t.Errorf("the item after a YAML save: %+v", got)
	}
	if p := save(admin, "/ui/catalog/small-cache/edit", "display_name: [unclosed\n"); p.status != http.StatusBadRequest ||
		!strings.Contains(p.body, "INVALID_YAML") {
		t.Errorf("YAML that does not parse: %d, want 400 INVALID_YAML", p.status)
	}

	var tok struct{ Token string }
	s.Do(t, "POST", "/api/v1/tokens", map[string]any{"name": "alice", "role": "user", "project": "default"},
		"Authorization", "Bearer s3cret-admin").Want(t, http.StatusCreated).JSON(t, &tok)
	user := newBrowser(t, s.URL())
	user.signIn(tok.Token)
	if p := user.get("/ui/catalog/small-cache/edit"); p.status != http.StatusOK || strings.Contains(p.body, "<textarea") ||
		!strings.Contains(p.body, "Only admins change definitions") {
		t.Errorf("a user's view of a definition: %d, want it read only", p.status)
	}
	if p := save(user, "/ui/catalog/small-cache/edit", `{"display_name": "mine"}`); p.status != http.StatusForbidden {
		t.Errorf("a user changing a catalog item: %d, want the API's 403", p.status)
	}
}
