package console_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// browser is a cookie-keeping client that does not follow redirects.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, base: base, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) get(path string) page {
	b.t.Helper()
	resp, err := b.c.Get(b.base + path)
	if err != nil {
		b.t.Fatal(err)
	}
	return read(b.t, resp)
}

func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	resp, err := b.c.PostForm(b.base+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	return read(b.t, resp)
}

// csrf is the browser's CSRF secret, as its cookie holds it (the forms
// carry the same value).
func (b *browser) csrf() string {
	u, _ := url.Parse(b.base + "/ui/")
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "steward_csrf" {
			return c.Value
		}
	}
	b.t.Fatal("no CSRF cookie")
	return ""
}

// cookieSet is the cookie name an answer sets, or nil.
func cookieSet(p page, name string) *http.Cookie {
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func read(t *testing.T, resp *http.Response) page {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

// Issue 25: / leads to the console; its pages list the catalog and the
// orders as the API has them, every value escaped, each page with a
// Content-Security-Policy that allows nothing inline and its stylesheet
// served from the binary.
func TestConsole_PagesShowTheAPIsData(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, func(c *server.Config) { c.ProcessProvider, c.ProcessProviderNoOp = true, true })
		waitForProvider(t, s)
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=xss", map[string]any{"catalog_item_id": "sleeper",
			"display_name": `<img src=x onerror=alert(1)>`}).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=plain", map[string]any{"catalog_item_id": "sleeper"}).Want(t, http.StatusCreated)
		b := newBrowser(t, s.URL())

		for path, to := range map[string]string{"/": "/ui/", "/ui": "/ui/", "/ui/": "/ui/orders"} {
			if p := b.get(path); p.status != http.StatusFound || p.header.Get("Location") != to {
				t.Errorf("GET %s: %d to %q, want 302 to %s", path, p.status, p.header.Get("Location"), to)
			}
		}
		orders := b.get("/ui/orders")
		if orders.status != http.StatusOK {
			t.Fatalf("orders page: %d %s", orders.status, orders.body)
		}
		if strings.Contains(orders.body, "<img src=x") || !strings.Contains(orders.body, "&lt;img src=x onerror=alert(1)&gt;") {
			t.Errorf("the display name is not escaped on the orders page")
		}
		if !strings.Contains(orders.body, ">xss<") || !strings.Contains(orders.body, "sleeper") {
			t.Errorf("the orders page does not list order xss of sleeper")
		}
		// Issue 46, item 11: a name is shown once when it is the id (an
		// order without a display name), the id beside it when not; the
		// header marks the page it is on.
		if !strings.Contains(orders.body, `<a class="name" href="/ui/orders/plain?project=default">plain</a></td>`) ||
			!strings.Contains(orders.body, `onerror=alert(1)&gt;</a> <span class="id">xss</span></td>`) {
			t.Errorf("the orders page does not name plain once and xss by its name and id:\n%s", orders.body)
		}
		if p := b.get("/ui/orders/plain"); !strings.Contains(p.body, "<h1>plain</h1>") || strings.Contains(p.body, `<span class="id">plain</span>`) {
			t.Errorf("the page of an order without a display name shows its id twice")
		}
		if !strings.Contains(orders.body, `<a href="/ui/orders" aria-current="page">Orders</a>`) ||
			strings.Contains(orders.body, `<a href="/ui/catalog" aria-current="page">`) {
			t.Error("the orders page's header does not mark Orders, and Orders only, as the current page")
		}
		if !strings.Contains(orders.body, `class="open-server"`) {
			t.Error("a --dev server's page does not say that it runs open")
		}
		csp := orders.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "style-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("Content-Security-Policy %q: want own scripts and styles only", csp)
		}
		if strings.Contains(orders.body, "<script>") || strings.Contains(orders.body, "style=") {
			t.Error("the orders page has inline script or style")
		}
		if filtered := b.get("/ui/orders?state=terminated"); strings.Contains(filtered.body, ">xss<") {
			t.Error("the state filter shows an order of another state")
		}

		catalog := b.get("/ui/catalog")
		if !strings.Contains(catalog.body, `<a href="/ui/catalog" aria-current="page">Catalog</a>`) {
			t.Error("the catalog page's header does not mark Catalog as the current page")
		}
		for _, item := range []string{"sleeper", "postgres-small"} {
			if !strings.Contains(catalog.body, item) {
				t.Errorf("the catalog page does not show %s", item)
			}
		}
		css := b.get("/ui/static/style.css")
		if css.status != http.StatusOK || !strings.HasPrefix(css.header.Get("Content-Type"), "text/css") {
			t.Errorf("stylesheet: %d %s", css.status, css.header.Get("Content-Type"))
		}
	})
}

// Issue 25: on a server with tokens, a page sends an unknown browser to
// sign in; a pasted token that the API refuses is refused; a good one
// starts a session whose id (not the token) is kept in an HttpOnly,
// SameSite=Strict cookie and opens the pages; signing in and out without
// the form's CSRF token is refused; signing out ends the session.
func TestConsole_SignInAndOut(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.Dev, c.APIToken = false, "s3cret-admin" })
	b := newBrowser(t, s.URL())

	if p := b.get("/ui/orders"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/signin" {
		t.Fatalf("orders before sign-in: %d to %q, want 303 to /ui/signin", p.status, p.header.Get("Location"))
	}
	signin := b.get("/ui/signin")
	if !strings.Contains(signin.body, `<label for="token">`) {
		t.Error("the token field has no label")
	}
	if p := b.post("/ui/signin", url.Values{"token": {"s3cret-admin"}}); p.status != http.StatusForbidden {
		t.Errorf("sign-in without the CSRF token: %d, want 403", p.status)
	}
	if p := b.post("/ui/signin", url.Values{"token": {"wrong"}, "csrf": {b.csrf()}}); p.status != http.StatusUnauthorized ||
		!strings.Contains(p.body, "not accepted") {
		t.Errorf("sign-in with a bad token: %d, want 401 saying so", p.status)
	}
	p := b.post("/ui/signin", url.Values{"token": {"s3cret-admin"}, "csrf": {b.csrf()}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/orders" {
		t.Fatalf("sign-in: %d to %q", p.status, p.header.Get("Location"))
	}
	set := cookieSet(p, "steward_session")
	if set == nil || set.Value == "" || strings.Contains(set.Value, "s3cret-admin") || !set.HttpOnly || set.SameSite != http.SameSiteStrictMode {
		t.Errorf("session cookie %v: want a session id (not the token), HttpOnly, SameSite=Strict", set)
	}
	if p := b.get("/ui/orders"); p.status != http.StatusOK || !strings.Contains(p.body, "Sign out") {
		t.Errorf("orders after sign-in: %d", p.status)
	}

	// A user's token signs in too, and sees what a user may: the audit log
	// is the API's 403, shown with its reason.
	var tok struct{ Token string }
	s.Do(t, "POST", "/api/v1/tokens", map[string]any{"name": "alice", "role": "user", "project": "team-a"},
		"Authorization", "Bearer s3cret-admin").Want(t, http.StatusCreated).JSON(t, &tok)
	alice := newBrowser(t, s.URL())
	alice.get("/ui/signin")
	if p := alice.post("/ui/signin", url.Values{"token": {tok.Token}, "csrf": {alice.csrf()}}); p.status != http.StatusSeeOther {
		t.Fatalf("a user's sign-in: %d", p.status)
	}
	if p := alice.get("/ui/orders"); p.status != http.StatusOK ||
		!strings.Contains(p.body, `<span class="who">alice <span class="role">user in team-a</span></span>`) ||
		strings.Contains(p.body, "open-server") {
		t.Errorf("a user's orders page: %d, want it to name alice, a user in team-a, and no open-server banner", p.status)
	}
	if p := alice.get("/ui/audit"); p.status != http.StatusForbidden || !strings.Contains(p.body, "audit log") {
		t.Errorf("a user's audit page: %d, want the API's 403 with its reason: %s", p.status, p.body)
	}
	if p := b.get("/ui/audit"); p.status != http.StatusOK {
		t.Errorf("the admin's audit page: %d", p.status)
	}

	if p := b.post("/ui/signout", url.Values{"csrf": {"forged"}}); p.status != http.StatusForbidden {
		t.Errorf("sign-out with a forged CSRF token: %d, want 403", p.status)
	}
	if p := b.post("/ui/signout", url.Values{"csrf": {b.csrf()}}); p.status != http.StatusSeeOther {
		t.Errorf("sign-out: %d", p.status)
	}
	if p := b.get("/ui/orders"); p.status != http.StatusSeeOther {
		t.Errorf("orders after sign-out: %d, want 303 to sign in", p.status)
	}
}

// Issue 25: an order's page shows its conditions, its attribute sets side
// by side and its lifecycle log; its forms rehydrate it (the page then
// names the operation) and delete it, each refused without the form's
// CSRF token (nothing starts), and the API's refusal of an action shows
// with its reason.
func TestConsole_OrderPageAndItsActions(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider, c.ProcessProviderNoOp = true, true })
	waitForProvider(t, s)
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=web", map[string]any{"catalog_item_id": "sleeper",
		"user_values": []map[string]any{{"path": "process.args", "value": []string{"600"}}}}).Want(t, http.StatusCreated)
	type order struct {
		State      string `json:"state"`
		InstanceID string `json:"instance_id"`
	}
	get := func() order {
		var o order
		s.Do(t, "GET", "/api/v1/catalog-item-instances/web?show_deleted=true", nil).Want(t, http.StatusOK).JSON(t, &o)
		return o
	}
	poll.Until(t, "order web is up", func() bool { return get().State == "up" })
	b := newBrowser(t, s.URL())

	p := b.get("/ui/orders/web")
	if p.status != http.StatusOK {
		t.Fatalf("order page: %d %s", p.status, p.body)
	}
	for _, want := range []string{"<td>Ready</td><td>True</td>", "process.args", "[&#34;600&#34;]", "<td>create</td>"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the order page does not show %q", want)
		}
	}
	if p := b.get("/ui/orders/nope"); p.status != http.StatusNotFound {
		t.Errorf("page of an unknown order: %d, want 404", p.status)
	}

	before := get().InstanceID
	if p := b.post("/ui/orders/web/rehydrate", url.Values{}); p.status != http.StatusForbidden {
		t.Errorf("rehydrate without the CSRF token: %d, want 403", p.status)
	}
	var ops struct {
		Results []struct{ ID string } `json:"results"`
	}
	s.Do(t, "GET", "/api/v1/operations", nil).Want(t, http.StatusOK).JSON(t, &ops)
	if len(ops.Results) != 0 {
		t.Fatalf("a refused form started operations %v", ops.Results)
	}
	// Issue 46, item 11: Rehydrate, Delete, Force delete and Rotate
	// credentials are asked for on a page of their own, whose form alone
	// carries confirm=yes; a POST without it acts not and leads there.
	page := b.get("/ui/orders/web")
	for _, action := range []string{"rehydrate", "delete"} {
		link := `href="/ui/orders/web/confirm?action=` + action + `&amp;project=default"`
		if !strings.Contains(page.body, link) || strings.Contains(page.body, `action="/ui/orders/web/`+action) {
			t.Errorf("the order page does not lead to %s's confirmation (%s), or acts at once", action, link)
		}
	}
	if strings.Contains(page.body, "rotate-credentials") {
		t.Error("the page of an order whose provider hands out no credentials offers to rotate them")
	}
	if p := b.post("/ui/orders/web/rehydrate", url.Values{"csrf": {b.csrf()}}); p.status != http.StatusSeeOther ||
		p.header.Get("Location") != "/ui/orders/web/confirm?action=rehydrate" {
		t.Errorf("rehydrate without its confirmation: %d to %q, want 303 to the confirmation page", p.status, p.header.Get("Location"))
	}
	s.Do(t, "GET", "/api/v1/operations", nil).Want(t, http.StatusOK).JSON(t, &ops)
	if len(ops.Results) != 0 {
		t.Fatalf("a rehydration not confirmed started operations %v", ops.Results)
	}
	confirm := b.get("/ui/orders/web/confirm?action=rehydrate&project=default")
	for _, want := range []string{`<form method="post" action="/ui/orders/web/rehydrate?project=default"`,
		`<input type="hidden" name="confirm" value="yes">`, `<input type="hidden" name="csrf" value="` + b.csrf() + `">`,
		`<button type="submit" class="primary">Rehydrate</button>`, `<a class="button quiet" href="/ui/orders/web?project=default">Cancel</a>`,
		"on a new instance"} {
		if !strings.Contains(confirm.body, want) {
			t.Errorf("the rehydration's confirmation page has no %s", want)
		}
	}
	if p := b.get("/ui/orders/web/confirm?action=explode"); p.status != http.StatusNotFound {
		t.Errorf("the confirmation of no such action: %d, want 404", p.status)
	}
	p = b.post("/ui/orders/web/rehydrate", url.Values{"csrf": {b.csrf()}, "confirm": {"yes"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("rehydrate: %d %s", p.status, p.body)
	}
	if shown := b.get(p.header.Get("Location")); !strings.Contains(shown.body, "Rehydration started (operation ") {
		t.Errorf("the order page after a rehydration does not name its operation")
	}
	poll.Until(t, "the order moves to a new instance", func() bool { o := get(); return o.State == "up" && o.InstanceID != before })
	// Issue 46, item 11: an operation's id links to its page, which shows
	// its members; its target links to the order.
	s.Do(t, "GET", "/api/v1/operations", nil).Want(t, http.StatusOK).JSON(t, &ops)
	if len(ops.Results) != 1 {
		t.Fatalf("operations %v, want the rehydration", ops.Results)
	}
	opLink := `<a class="id" href="/ui/operations/` + ops.Results[0].ID + `">`
	if p := b.get("/ui/operations"); !strings.Contains(p.body, "<td>rehydrate</td>") || !strings.Contains(p.body, "Cleanup tasks") ||
		!strings.Contains(p.body, opLink) || !strings.Contains(p.body, `<a href="/ui/orders/web">catalog-item-instances/web</a>`) {
		t.Errorf("the operations page does not list the rehydration, linked to its page and its order: %d", p.status)
	}
	if p := b.get("/ui/orders/web"); !strings.Contains(p.body, `<a class="id" href="/ui/operations/`+ops.Results[0].ID+`?project=default">`) {
		t.Error("the order page's operations do not link to their pages")
	}
	op := b.get("/ui/operations/" + ops.Results[0].ID)
	for _, want := range []string{"<h1>rehydrate</h1>", `<span class="badge tone-ok">done</span>`, "<dt>old_instance_id</dt><dd>" + before + "</dd>",
		`<dt>Target</dt><dd><a href="/ui/orders/web">catalog-item-instances/web</a></dd>`} {
		if !strings.Contains(op.body, want) {
			t.Errorf("the operation's page has no %s", want)
		}
	}
	if p := b.get("/ui/operations/nope"); p.status != http.StatusNotFound {
		t.Errorf("the page of no such operation: %d, want the API's 404", p.status)
	}
	audit := b.get("/ui/audit?target=catalog-item-instances/web")
	if audit.status != http.StatusOK || !strings.Contains(audit.body, "rehydrate") || !strings.Contains(audit.body, "user:dev") {
		t.Errorf("the audit page does not show the rehydration by user:dev: %d %s", audit.status, audit.body)
	}
	if p := b.get("/ui/providers"); !strings.Contains(p.body, "<td>process-sp</td>") || !strings.Contains(p.body, "health-healthy") {
		t.Errorf("the providers page does not show process-sp healthy: %d", p.status)
	}
	if p := b.post("/ui/cleanup-tasks/nope/retry", url.Values{}); p.status != http.StatusForbidden {
		t.Errorf("retry without the CSRF token: %d, want 403", p.status)
	}
	if p := b.post("/ui/cleanup-tasks/nope/retry", url.Values{"csrf": {b.csrf()}}); p.status != http.StatusNotFound {
		t.Errorf("retry of an unknown cleanup task: %d, want the API's 404", p.status)
	}

	// The update form shows the order's values; a changed field is sent
	// as an edit, and nothing changed sends nothing.
	form := b.get("/ui/orders/web/update")
	if !strings.Contains(form.body, `<input id="f0-0" name="f0" value="600" aria-label="Arguments, item 1">`) {
		t.Errorf("the update form does not show the order's arguments")
	}
	if p := b.post("/ui/orders/web/update", url.Values{"csrf": {b.csrf()}, "f0": {"600", ""}, "f1": {"on_failure"}}); !strings.Contains(p.header.Get("Location"), "Nothing+changed") {
		t.Errorf("an update changing nothing: %d to %q", p.status, p.header.Get("Location"))
	}
	p = b.post("/ui/orders/web/update", url.Values{"csrf": {b.csrf()}, "f0": {"", "900", ""}, "f1": {"on_failure"}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.header.Get("Location"), "Update+requested") {
		t.Fatalf("update: %d to %q: %s", p.status, p.header.Get("Location"), p.body)
	}
	poll.Until(t, "the order is up with the new arguments", func() bool {
		var o struct {
			State      string `json:"state"`
			Attributes struct {
				Requested map[string]any `json:"requested"`
			} `json:"attributes"`
		}
		s.Do(t, "GET", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusOK).JSON(t, &o)
		args, _ := o.Attributes.Requested["process"].(map[string]any)
		return o.State == "up" && fmt.Sprint(args["args"]) == "[900]"
	})
	if p := b.post("/ui/orders/web/update", url.Values{"csrf": {b.csrf()}, "f0": {"900"}, "f1": {"sometimes"}}); p.status != http.StatusBadRequest ||
		!strings.Contains(p.body, `<form method="post" action="/ui/orders/web/update?project=default"`) || !strings.Contains(p.body, `id="f1-error"`) {
		t.Errorf("an update the API refuses: %d, want 400 and the form again: %s", p.status, p.body)
	}
	if p := b.post("/ui/orders/web/delete", url.Values{"csrf": {b.csrf()}}); p.status != http.StatusSeeOther ||
		p.header.Get("Location") != "/ui/orders/web/confirm?action=delete" || get().State != "up" {
		t.Errorf("delete without its confirmation: %d to %q, want 303 to the confirmation page and nothing deleted", p.status, p.header.Get("Location"))
	}
	if p := b.get("/ui/orders/web/confirm?action=delete"); !strings.Contains(p.body, `<button type="submit" class="danger-fill">Delete</button>`) ||
		!strings.Contains(p.body, "This cannot be undone.") {
		t.Errorf("the deletion's confirmation page does not say what it does with a danger button: %s", p.body)
	}
	if p := b.post("/ui/orders/web/delete", url.Values{"csrf": {b.csrf()}, "confirm": {"yes"}}); p.status != http.StatusSeeOther {
		t.Fatalf("delete: %d %s", p.status, p.body)
	}
	poll.Until(t, "the order is terminated", func() bool { return get().State == "terminated" })
	if p := b.post("/ui/orders/web/rehydrate", url.Values{"csrf": {b.csrf()}, "confirm": {"yes"}}); p.status < 400 || p.status >= 500 ||
		!strings.Contains(p.body, `<div class="alert error" role="alert">`) {
		t.Errorf("rehydrating a terminated order: %d, want the API's 4xx shown", p.status)
	}
}

// Issue 46: a failed order's page says why (the process's stderr) once, as
// its Status: the last error, the Ready condition and the lifecycle log,
// which quote the status message, do not repeat it.
func TestConsole_OrderPageShowsAFailureOnce(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider = true })
	waitForProvider(t, s)
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=broken", map[string]any{"catalog_item_id": "sleeper",
		"user_values": []map[string]any{{"path": "process.args", "value": []string{"notanumber"}},
			{"path": "restart_policy", "value": "never"}}}).Want(t, http.StatusCreated)
	poll.Until(t, "order broken failed", func() bool {
		var o struct {
			State string `json:"state"`
		}
		s.Do(t, "GET", "/api/v1/catalog-item-instances/broken", nil).Want(t, http.StatusOK).JSON(t, &o)
		return o.State == "failed"
	})
	p := newBrowser(t, s.URL()).get("/ui/orders/broken")
	if p.status != http.StatusOK {
		t.Fatalf("order page: %d %s", p.status, p.body)
	}
	status := "<dt>Status</dt><dd>FAILED: process exited with status 1; restart_policy never; stderr: sleep: invalid time interval"
	if n := strings.Count(p.body, "invalid time interval"); n != 1 || !strings.Contains(p.body, status) {
		t.Errorf("the order page shows the reason %d times, want once, in its Status:\n%s", n, p.body)
	}
	for _, want := range []string{`<dt>Last error</dt><dd class="error">resource `, "<td>Ready</td><td>False</td><td>Failed</td><td>resource "} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the order page does not show %q", want)
		}
	}
}

// waitForProvider waits until the in-process provider registered.
func waitForProvider(t *testing.T, s *apitest.Server) {
	t.Helper()
	poll.Until(t, "the in-process provider registers", func() bool {
		select {
		case <-s.ProcessProvider().Registered():
			return true
		default:
			return false
		}
	})
}

// Issue 25: the order form is generated from the catalog item's fields and
// the type's schema (an enum is a select with the default chosen, an array
// a JSON field with the default); submitting it orders the item with the
// values given; a value that is not JSON, a value the API refuses and a
// policy's rejection show on the form, and order nothing.
func TestConsole_OrderFromTheGeneratedForm(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider, c.ProcessProviderNoOp = true, true })
	waitForProvider(t, s)
	b := newBrowser(t, s.URL())

	form := b.get("/ui/catalog/sleeper/order")
	if form.status != http.StatusOK {
		t.Fatalf("order form: %d %s", form.status, form.body)
	}
	// Issue 46, item 11: the arguments, strings, are a list editor (one
	// input an element, two empty to add with), and the command, which no
	// field lets an order change, is shown fixed just before them.
	command := strings.Index(form.body, `<output id="x0"><code>sleep</code> </output>`)
	args := strings.Index(form.body, `<legend>Arguments <span class="id">process.args</span></legend>`)
	if command < 0 || args < command || strings.Contains(form.body[command:args], `<div class="field`) {
		t.Errorf("the order form does not show the fixed command sleep just before the arguments")
	}
	for _, want := range []string{`<input id="f0-0" name="f0" value="3600" aria-label="Arguments, item 1">`,
		`<input id="f0-1" name="f0" value="" aria-label="Arguments, item 2">`, `<input id="f0-2" name="f0" value="" aria-label="Arguments, item 3">`,
		`<button type="submit" name="more" value="f0" class="link" formnovalidate>More rows</button>`,
		`<button type="submit" class="primary">Order</button>`, `<select id="f1" name="f1">`, `<option selected>on_failure</option>`, `<option>never</option>`} {
		if !strings.Contains(form.body, want) {
			t.Errorf("the order form has no %s", want)
		}
	}
	if strings.Contains(form.body, `id="f0-3"`) || strings.Contains(form.body, `<textarea id="f0"`) {
		t.Error("the order form's arguments are not one element and two empty rows")
	}
	// More rows shows the form again with three more, orders nothing.
	more := b.post("/ui/catalog/sleeper/order", url.Values{"csrf": {b.csrf()}, "order_id": {"more"},
		"f0": {"600", "", ""}, "f1": {"never"}, "more": {"f0"}})
	if more.status != http.StatusOK || !strings.Contains(more.body, `<input id="f0-0" name="f0" value="600"`) ||
		!strings.Contains(more.body, `id="f0-5"`) || strings.Contains(more.body, `id="f0-6"`) {
		t.Errorf("More rows: %d, want the form again with its element and five empty rows", more.status)
	}
	s.Do(t, "GET", "/api/v1/catalog-item-instances/more", nil).Want(t, http.StatusNotFound)

	// Emptying a row removes its element.
	p := b.post("/ui/catalog/sleeper/order", url.Values{"csrf": {b.csrf()}, "order_id": {"fromform"},
		"display_name": {"from the form"}, "f0": {"", "600", "", "3"}, "f1": {"never"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/orders/fromform" {
		t.Fatalf("order from the form: %d to %q: %s", p.status, p.header.Get("Location"), p.body)
	}
	var o struct {
		DisplayName string `json:"display_name"`
		UserValues  []struct {
			Path  string `json:"path"`
			Value any    `json:"value"`
		} `json:"user_values"`
	}
	s.Do(t, "GET", "/api/v1/catalog-item-instances/fromform", nil).Want(t, http.StatusOK).JSON(t, &o)
	if o.DisplayName != "from the form" || len(o.UserValues) != 2 || fmt.Sprint(o.UserValues[0].Value) != "[600 3]" ||
		o.UserValues[1].Value != "never" {
		t.Errorf("the order made from the form: %+v", o)
	}

	// Issue 46, item 11: the API's refusals are sentences naming the field
	// by its display name, an element by its path too, next to the control
	// and above the form; never the API's INVALID_ARGUMENT detail.
	for name, tc := range map[string]struct {
		item   string
		values url.Values
		shows  []string
	}{
		"refused by schema": {"sleeper", url.Values{"f1": {"sometimes"}}, []string{
			`<p class="error" id="f1-error">must be one of &#34;always&#34;, &#34;on_failure&#34;, &#34;never&#34;.</p>`,
			`<p class="alert-title">One value needs a change: <code class="reason">INVALID_ARGUMENT</code></p>`,
			`<li>Restart policy: must be one of &#34;always&#34;, &#34;on_failure&#34;, &#34;never&#34;.</li>`}},
		"above its bound": {"postgres-small", url.Values{"f1": {"500"}}, []string{
			`<p class="error" id="f1-error">must be at most 100.</p>`, `<li>Connection limit: must be at most 100.</li>`}},
		"an element refused": {"postgres-small", url.Values{"f2": {"ok", "Bad name!", ""}}, []string{
			`<p class="error" id="f2-1-error">extensions[1]: does not have the form this field takes`,
			`<input id="f2-1" name="f2" value="Bad name!" pattern="^[a-z_][a-z0-9_]{0,62}$" aria-label="Extensions, item 2" aria-invalid="true" aria-describedby="f2-1-error">`,
			`<li>Extensions (<code>extensions[1]</code>): does not have the form this field takes`}},
	} {
		tc.values.Set("csrf", b.csrf())
		tc.values.Set("order_id", "refused")
		p := b.post("/ui/catalog/"+tc.item+"/order", tc.values)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, `<form method="post" action="/ui/catalog/`+tc.item+`/order"`) {
			t.Errorf("%s: %d, want 400 and the form again", name, p.status)
		}
		for _, want := range tc.shows {
			if !strings.Contains(p.body, want) {
				t.Errorf("%s: the form does not show %s", name, want)
			}
		}
		if strings.Contains(p.body, "invalid argument:") || strings.Contains(p.body, "user_values[") {
			t.Errorf("%s: the form shows the API's detail, not sentences:\n%s", name, p.body)
		}
	}
	s.Do(t, "POST", "/api/v1/policies", map[string]any{"display_name": "no never", "policy_type": "GLOBAL", "priority": 1,
		"rego_code": "package nonever\nmain := {\"rejected\": true, \"rejection_reason\": \"processes must restart\"} if { input.spec.restart_policy == \"never\" }",
	}).Want(t, http.StatusCreated)
	p = b.post("/ui/catalog/sleeper/order", url.Values{"csrf": {b.csrf()}, "order_id": {"refused"}, "f1": {"never"}})
	if p.status != http.StatusNotAcceptable || !strings.Contains(p.body, `<p class="alert-title">Rejected by policy &#34;no never&#34; (`) ||
		!strings.Contains(p.body, "): processes must restart. <code class=\"reason\">POLICY_REJECTED</code>") {
		t.Errorf("a policy's rejection: %d, want 406 showing its reason: %s", p.status, p.body)
	}
	s.Do(t, "GET", "/api/v1/catalog-item-instances/refused", nil).Want(t, http.StatusNotFound)
}
