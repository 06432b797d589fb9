package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
)

// signIn signs b in with token and returns its session cookie's value.
func (b *browser) signIn(token string) string {
	b.t.Helper()
	b.get("/ui/signin") // the CSRF cookie
	p := b.post("/ui/signin", url.Values{"token": {token}, "csrf": {b.csrf()}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/orders" {
		b.t.Fatalf("sign in: %d to %q: %s", p.status, p.header.Get("Location"), p.body)
	}
	c := cookieSet(p, "steward_session")
	if c == nil || c.Value == "" {
		b.t.Fatal("sign-in set no session cookie")
	}
	return c.Value
}

var secret = regexp.MustCompile(`stw_[0-9a-f_-]+`)

// Issue 25: an admin creates a token on the tokens page and sees its secret
// once (the list never shows it), the token works, a revoked one does not;
// a refusal shows on the form; the policies page lists policies in the
// chain's order and turns one off. A user's token gets the API's 403 for
// what it may not do, and no form works without its CSRF token.
func TestConsole_TokensAndPolicies(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.Dev, c.APIToken = false, "s3cret-admin" })
	admin := newBrowser(t, s.URL())
	admin.signIn("s3cret-admin")

	if p := admin.post("/ui/tokens", url.Values{"name": {"alice"}, "role": {"user"}, "project": {"default"}}); p.status != http.StatusForbidden {
		t.Errorf("create a token without the CSRF token: %d, want 403", p.status)
	}
	made := admin.post("/ui/tokens", url.Values{"csrf": {admin.csrf()}, "name": {"alice"}, "role": {"user"},
		"project": {"default"}, "ttl_hours": {"2"}})
	token := secret.FindString(made.body)
	if made.status != http.StatusCreated || token == "" || !strings.Contains(made.body, "shown this once") {
		t.Fatalf("create a token: %d, want 201 showing its secret once: %s", made.status, made.body)
	}
	list := admin.get("/ui/tokens")
	if strings.Contains(list.body, token) || !strings.Contains(list.body, "alice") {
		t.Errorf("the tokens list shows a secret, or not the new token")
	}
	if p := admin.post("/ui/tokens", url.Values{"csrf": {admin.csrf()}, "name": {"bad"}, "role": {"emperor"}}); p.status != http.StatusBadRequest ||
		!strings.Contains(p.body, `role="alert"`) {
		t.Errorf("a token of no such role: %d, want the API's 400 on the page", p.status)
	}

	for id, prio := range map[string]int{"second": 20, "first": 10} {
		req := map[string]any{"display_name": id, "policy_type": "GLOBAL", "priority": prio,
			"rego_code": "package p" + id + "\nmain := {}"}
		s.Do(t, "POST", "/api/v1/policies?id="+id, req, "Authorization", "Bearer s3cret-admin").Want(t, http.StatusCreated)
	}
	policies := admin.get("/ui/policies")
	if first, second := strings.Index(policies.body, ">first<"), strings.Index(policies.body, ">second<"); first < 0 || second < first {
		t.Errorf("the policies page does not list first (priority 10) before second (20)")
	}
	if strings.Contains(policies.body, `<span class="id">first</span>`) {
		t.Error("the policies page names policy first, whose name is its id, twice") // issue 46, item 11
	}
	if p := admin.post("/ui/policies/first/enabled", url.Values{"csrf": {admin.csrf()}, "enabled": {"false"}}); p.status != http.StatusSeeOther {
		t.Fatalf("disable a policy: %d %s", p.status, p.body)
	}
	var pol struct {
		Enabled bool `json:"enabled"`
	}
	s.Do(t, "GET", "/api/v1/policies/first", nil, "Authorization", "Bearer s3cret-admin").Want(t, http.StatusOK).JSON(t, &pol)
	if pol.Enabled {
		t.Error("the policy is still enabled after Disable")
	}

	user := newBrowser(t, s.URL())
	user.signIn(token)
	if p := admin.get("/ui/policies"); !strings.Contains(p.body, `action="/ui/policies/second/enabled"`) {
		t.Error("an admin's policies page has no Enable/Disable")
	}
	if p := user.get("/ui/policies"); p.status != http.StatusOK || strings.Contains(p.body, "/enabled") {
		t.Errorf("a user's policies page: %d, want it listed without Enable/Disable", p.status)
	}
	if p := user.get("/ui/catalog"); strings.Contains(p.body, "/ui/catalog/new/edit") {
		t.Error("a user's catalog page offers a new catalog item")
	}
	if p := user.post("/ui/policies/second/enabled", url.Values{"csrf": {user.csrf()}, "enabled": {"false"}}); p.status != http.StatusForbidden {
		t.Errorf("a user disabling a policy: %d, want the API's 403", p.status)
	}
	if p := user.post("/ui/tokens", url.Values{"csrf": {user.csrf()}, "name": {"root"}, "role": {"admin"}}); p.status != http.StatusForbidden {
		t.Errorf("a user making an admin token: %d, want the API's 403", p.status)
	}

	id := regexp.MustCompile(`alice <span class="id">([^<]+)</span>`).FindStringSubmatch(list.body)
	if id == nil {
		t.Fatal("no id for alice on the tokens page")
	}
	if p := admin.post("/ui/tokens/"+id[1]+"/revoke", url.Values{"csrf": {admin.csrf()}}); p.status != http.StatusSeeOther {
		t.Fatalf("revoke: %d %s", p.status, p.body)
	}
	s.Do(t, "GET", "/api/v1/catalog-items", nil, "Authorization", "Bearer "+token).Want(t, http.StatusUnauthorized)
}
