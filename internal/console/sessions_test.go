package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// adminToken is the static admin token of the servers here.
const adminToken = "s3cret-admin"

// withTokens runs the server with authentication, adminToken its static
// token.
func withTokens(c *server.Config) { c.Dev, c.APIToken = false, adminToken }

// userToken makes a token of a user of team-a named name, and returns its
// secret and id.
func userToken(t *testing.T, s *apitest.Server, name string) (token, id string) {
	t.Helper()
	var tok struct{ Token, ID string }
	s.Do(t, "POST", "/api/v1/tokens", map[string]any{"name": name, "role": "user", "project": "team-a"},
		"Authorization", "Bearer "+adminToken).Want(t, http.StatusCreated).JSON(t, &tok)
	return tok.Token, tok.ID
}

// getAs fetches path with only the session cookie value, as a client that
// kept (or stole) it would.
func getAs(t *testing.T, base, path, session string) page {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	req.AddCookie(&http.Cookie{Name: "steward_session", Value: session})
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return read(t, resp)
}

// signedOut reports whether p sends the browser to sign in.
func signedOut(p page) bool {
	return p.status == http.StatusSeeOther && p.header.Get("Location") == "/ui/signin"
}

// Issue 45, finding 10: the session cookie holds a session id, not the
// token, and that id is no API credential; signing out deletes the
// session, so the old cookie value replayed afterwards is sent to sign in
// (and told to go), while the token it signed in with still works on the
// API: signing out ends the session, not the token.
func TestConsole_SignOutMakesTheOldCookieUseless(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, withTokens)
	tok, _ := userToken(t, s, "alice")
	b := newBrowser(t, s.URL())
	id := b.signIn(tok)
	if strings.Contains(id, tok) || strings.Contains(tok, id) || len(id) < 43 {
		t.Errorf("session cookie %q: want a random id of 256 bits, not the token", id)
	}
	if p := getAs(t, s.URL(), "/ui/orders", id); p.status != http.StatusOK || !strings.Contains(p.body, ">alice <span") {
		t.Fatalf("the session's cookie alone: %d, want alice's orders page", p.status)
	}
	s.Do(t, "GET", "/api/v1/whoami", nil, "Authorization", "Bearer "+id).Want(t, http.StatusUnauthorized)
	s.Do(t, "GET", "/api/v1/whoami", nil, "Cookie", "steward_session="+id).Want(t, http.StatusUnauthorized)

	if p := b.post("/ui/signout", url.Values{"csrf": {b.csrf()}}); !signedOut(p) {
		t.Fatalf("sign-out: %d to %q", p.status, p.header.Get("Location"))
	}
	for _, path := range []string{"/ui/orders", "/ui/audit", "/ui/events"} {
		p := getAs(t, s.URL(), path, id)
		if !signedOut(p) || strings.Contains(p.body, "alice") {
			t.Errorf("the old cookie replayed on %s after sign-out: %d to %q, want 303 to /ui/signin", path, p.status,
				p.header.Get("Location"))
		}
		if c := cookieSet(p, "steward_session"); c == nil || c.MaxAge >= 0 {
			t.Errorf("the answer to the old cookie on %s does not delete it: %v", path, c)
		}
	}
	s.Do(t, "GET", "/api/v1/whoami", nil, "Authorization", "Bearer "+tok).Want(t, http.StatusOK)
}

// Issue 45, finding 10: each console request resolves the session through
// its token again, so revoking the token signs its sessions out at the
// next request.
func TestConsole_RevokingTheTokenEndsItsSessions(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, withTokens)
	tok, tokenID := userToken(t, s, "alice")
	b := newBrowser(t, s.URL())
	b.signIn(tok)
	if p := b.get("/ui/orders"); p.status != http.StatusOK {
		t.Fatalf("orders page: %d", p.status)
	}
	s.Do(t, "DELETE", "/api/v1/tokens/"+tokenID, nil, "Authorization", "Bearer "+adminToken).Want(t, http.StatusOK)
	if p := b.get("/ui/orders"); !signedOut(p) {
		t.Errorf("orders page after the token's revocation: %d to %q, want 303 to /ui/signin", p.status, p.header.Get("Location"))
	}
}

// Issue 45, finding 10: signing in sets a new CSRF secret with the session
// cookie, so a value planted in the browser's CSRF cookie before (by a
// sibling subdomain, say) is refused on every form after the sign-in.
func TestConsole_SignInRenewsTheCSRFSecret(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, withTokens)
	b := newBrowser(t, s.URL())
	planted := strings.Repeat("p", 43)
	u, _ := url.Parse(s.URL() + "/ui/")
	b.c.Jar.SetCookies(u, []*http.Cookie{{Name: "steward_csrf", Value: planted, Path: "/ui/"}})
	p := b.post("/ui/signin", url.Values{"token": {adminToken}, "csrf": {planted}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", p.status, p.body)
	}
	renewed := cookieSet(p, "steward_csrf")
	if renewed == nil || renewed.Value == planted || len(renewed.Value) < 43 || !renewed.HttpOnly {
		t.Fatalf("the sign-in's CSRF cookie: %v, want a new random secret", renewed)
	}
	if b.csrf() != renewed.Value {
		t.Fatalf("the browser's CSRF cookie is %q, want the renewed one", b.csrf())
	}
	if p := b.post("/ui/signout", url.Values{"csrf": {planted}}); p.status != http.StatusForbidden {
		t.Errorf("a form carrying the planted CSRF value after sign-in: %d, want 403", p.status)
	}
	if p := b.get("/ui/orders"); p.status != http.StatusOK || !strings.Contains(p.body, renewed.Value) {
		t.Errorf("the orders page after sign-in: %d, want its forms to carry the renewed secret", p.status)
	}
	if p := b.post("/ui/signout", url.Values{"csrf": {renewed.Value}}); !signedOut(p) {
		t.Errorf("sign-out with the renewed secret: %d", p.status)
	}
}

// Issue 45, finding 10: the console's calls for a session are the API's
// calls of the session's principal, made without its token: an order from
// the form is alice's in her project, and the audit log names her and the
// token she signed in with.
func TestConsole_CallsActAsTheSessionsPrincipal(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, withTokens, func(c *server.Config) { c.ProcessProvider, c.ProcessProviderNoOp = true, true })
	waitForProvider(t, s)
	tok, tokenID := userToken(t, s, "alice")
	b := newBrowser(t, s.URL())
	b.signIn(tok)
	p := b.post("/ui/catalog/sleeper/order", url.Values{"csrf": {b.csrf()}, "order_id": {"mine"}, "f0": {`["600"]`}, "f1": {"never"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("order from the form: %d %s", p.status, p.body)
	}
	var order struct{ Project string }
	s.Do(t, "GET", "/api/v1/catalog-item-instances/mine", nil, "Authorization", "Bearer "+tok).Want(t, http.StatusOK).JSON(t, &order)
	if order.Project != "team-a" {
		t.Errorf("the order is in project %q, want alice's team-a", order.Project)
	}
	var events struct {
		Results []struct {
			Actor           struct{ Type, ID, Token string }
			Action, Project string
		}
	}
	s.Do(t, "GET", "/api/v1/audit-events?target=catalog_item_instance:mine", nil, "Authorization", "Bearer "+adminToken,
		"Steward-Project", "team-a").
		Want(t, http.StatusOK).JSON(t, &events)
	if len(events.Results) == 0 {
		t.Fatal("no audit record of the order")
	}
	for _, e := range events.Results {
		if e.Actor.Type != "user" || e.Actor.ID != "alice" || e.Actor.Token != tokenID || e.Project != "team-a" {
			t.Errorf("audit record %+v: want user:alice with token %s in team-a", e, tokenID)
		}
	}
	if p := b.get("/ui/audit"); p.status != http.StatusForbidden {
		t.Errorf("alice's audit page: %d, want the API's 403 for a user", p.status)
	}
}

// Issue 45, finding 10: a session lives in the database, so one made
// before the server restarts opens the pages after it, on either engine.
func TestConsole_SessionSurvivesARestart(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, withTokens)
		tok, _ := userToken(t, s, "alice")
		b := newBrowser(t, s.URL())
		id := b.signIn(tok)
		s = s.Restart(t)
		p := getAs(t, s.URL(), "/ui/orders", id)
		if p.status != http.StatusOK || !strings.Contains(p.body, ">alice <span") || !strings.Contains(p.body, "Sign out") {
			t.Errorf("the session's cookie after a restart: %d to %q, want alice's orders page", p.status, p.header.Get("Location"))
		}
	})
}
