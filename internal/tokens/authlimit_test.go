package tokens_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// limitBurst is the failures a credential or an address may have in these
// tests; they never refill during one.
const limitBurst = 3

// limited starts a server with small failure limits, adjusted by adjust.
func limited(t *testing.T, engine store.Engine, adjust ...func(*server.Config)) env {
	t.Helper()
	s := apitest.Start(t, engine, append([]func(*server.Config){func(c *server.Config) {
		c.Dev, c.APIToken = false, root
		c.AuthFailureBurst, c.AuthFailureEvery = limitBurst, time.Hour
	}}, adjust...)...)
	return env{s: s}
}

// trustLocalProxy trusts the test client (127.0.0.1) as a proxy.
func trustLocalProxy(c *server.Config) {
	c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
}

// whoami asks GET /api/v1/whoami with token, as the client forwarded-for
// names ("" sends no X-Forwarded-For).
func (e env) whoami(t *testing.T, token, forwardedFor string) *apitest.Response {
	t.Helper()
	var headers []string
	if forwardedFor != "" {
		headers = []string{"X-Forwarded-For", forwardedFor}
	}
	return e.as(t, token, "GET", "/api/v1/whoami", nil, headers...)
}

// wantRefused wants a 429 TOO_MANY_AUTH_FAILURES with Retry-After.
func wantRefused(t *testing.T, r *apitest.Response, what string) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("%s answered %d, want 429", what, r.Status)
	}
	r.WantProblem(t, http.StatusTooManyRequests, "TOO_MANY_AUTH_FAILURES")
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("%s: 429 without Retry-After", what)
	}
}

// Finding 4 of the probe: failures from one address are refused for a
// while (429) — even when each names another client in X-Forwarded-For,
// which an untrusted peer may not — but a valid token from that address
// still gets through: the static admin token and a database token never
// used before (so read from the store).
func TestAuth_AValidTokenPassesFromAnAddressOutOfFailures(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := limited(t, engine)
		admin := e.token(t, root, map[string]any{"name": "ops", "role": "admin"})
		for i := range limitBurst {
			e.whoami(t, fmt.Sprintf("stw_nope%d_x", i), fmt.Sprintf("203.0.113.%d", i)).
				WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")
		}
		wantRefused(t, e.whoami(t, "stw_other_x", "198.51.100.1"), "a bad token from an address out of failures")
		wantRefused(t, e.whoami(t, "", ""), "no token from an address out of failures")
		e.whoami(t, root, "").Want(t, http.StatusOK)
		e.whoami(t, admin, "").Want(t, http.StatusOK)
		wantRefused(t, e.whoami(t, "not-even-ours", ""), "a bad token after the good ones")
	})
}

// Finding 4 of the probe: behind a trusted proxy, one user's failures do
// not lock out another (whatever the first writes left of the proxy's
// entry), the access log names each user's address, and one token id
// guessed at from many addresses is refused while its real token still
// works.
func TestAuth_BehindATrustedProxyFailuresCountPerClientAndPerToken(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		var logs apitest.Logs
		e := limited(t, engine, trustLocalProxy, logs.CaptureLogs)
		alice := e.token(t, root, map[string]any{"name": "alice", "role": "user", "project": "team-a"})
		for i := range limitBurst {
			e.whoami(t, fmt.Sprintf("stw_nope%d_x", i), fmt.Sprintf("10.9.9.%d, 198.51.100.1", i)).
				WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")
		}
		wantRefused(t, e.whoami(t, "stw_more_x", "10.9.9.9, 198.51.100.1"), "user 1's next failure")
		e.whoami(t, alice, "198.51.100.1").Want(t, http.StatusOK)
		e.whoami(t, "stw_typo_x", "198.51.100.2").WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")
		poll.Until(t, "the access log names user 2's address", func() bool {
			return strings.Contains(logs.String(), `"client_address":"198.51.100.2"`)
		})

		id, _, _ := strings.Cut(strings.TrimPrefix(alice, "stw_"), "_")
		for i := range limitBurst {
			e.whoami(t, fmt.Sprintf("stw_%s_guess%d", id, i), fmt.Sprintf("203.0.113.%d", i)).
				WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")
		}
		wantRefused(t, e.whoami(t, "stw_"+id+"_guess", "203.0.113.200"), "another guess at alice's secret from a new address")
		e.whoami(t, alice, "203.0.113.201").Want(t, http.StatusOK)
	})
}

// The console's sign-in form authenticates through the API in process:
// behind a trusted proxy, one browser's bad tokens count against its own
// address (X-Forwarded-For, passed on), not the proxy's, so another
// browser still signs in.
func TestAuth_ConsoleSignInFailuresCountPerBrowserBehindAProxy(t *testing.T) {
	t.Parallel()
	e := limited(t, store.SQLite, trustLocalProxy)
	csrf := strings.Repeat("c", 32)
	signIn := func(token, client string) *apitest.Response {
		t.Helper()
		form := url.Values{"token": {token}, "csrf": {csrf}}
		return e.s.Do(t, "POST", "/ui/signin", []byte(form.Encode()),
			"Content-Type", "application/x-www-form-urlencoded", "Cookie", "steward_csrf="+csrf,
			"X-Forwarded-For", client)
	}
	for i := range limitBurst {
		if got := signIn(fmt.Sprintf("stw_nope%d_x", i), "198.51.100.1"); got.Status != http.StatusUnauthorized {
			t.Fatalf("bad sign-in %d: %d, want 401 (the form again); body %s", i, got.Status, got.Body)
		}
	}
	if got := signIn("stw_more_x", "198.51.100.1"); got.Status != http.StatusTooManyRequests {
		t.Errorf("browser 1's next failure: %d, want 429", got.Status)
	}
	if got := signIn("stw_typo_x", "198.51.100.2"); got.Status != http.StatusUnauthorized {
		t.Errorf("browser 2's first failure: %d, want 401 (not locked out by browser 1)", got.Status)
	}
	// Signed in, the form answers 303 to the orders, which the client
	// follows (without the cookie: to the sign-in page, 200); a refusal
	// would be the form again with 401, or 429.
	if got := signIn(root, "198.51.100.2"); got.Status != http.StatusOK {
		t.Errorf("browser 2 signing in: %d, want the redirect followed (200)", got.Status)
	}
}
