package httpapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
)

// oneToken authenticates the bearer token "good" as alice, a user of
// team-a, and nothing else.
type oneToken struct{}

var alice = auth.Principal{Type: "user", ID: "alice", Role: auth.RoleUser, Project: "team-a", Token: "tok-1"}

func (oneToken) Authenticate(_ context.Context, token string) (auth.Principal, error) {
	if token == "good" {
		return alice, nil
	}
	return auth.Principal{}, auth.ErrUnauthenticated
}

// actors records the audit actors the API names.
type actors struct {
	mu    sync.Mutex
	begun []string
}

func (a *actors) Begin(ctx context.Context, e httpapi.AuditEntry) context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.begun = append(a.begun, e.Actor.Key()+" "+e.Action)
	return ctx
}
func (a *actors) Finish(context.Context, int, string) {}
func (a *actors) Denied(ctx context.Context, e httpapi.AuditEntry, _ int, _ string) {
	a.Begin(ctx, e)
}

// Issue 45, finding 10: a request this process hands to the API with
// httpapi.ActAs (the console's, for a signed-in session) is served as that
// principal without a token, and everything after authentication sees the
// same principal as a bearer token of it would give: the project, the
// authorization (a user's refusal stays a refusal), the audit actor and
// the Idempotency-Key's owner. A request off the network cannot ask for
// it: without a token it is refused, whatever it sends.
func TestAPI_ActAsServesInProcessRequestsAsThePrincipal(t *testing.T) {
	t.Parallel()
	audit := &actors{}
	api, err := httpapi.New(httpapi.Config{Logger: slog.New(slog.NewTextHandler(t.Output(), nil)), Auth: oneToken{},
		Problems: append(httpapi.BaseProblems(),
			httpapi.Mapping{Err: auth.ErrUnauthenticated, Status: 401, Reason: "UNAUTHENTICATED", Title: "Unauthenticated"},
			httpapi.Mapping{Err: auth.ErrPermissionDenied, Status: 403, Reason: "PERMISSION_DENIED", Title: "Permission denied"}),
		Audit: audit})
	if err != nil {
		t.Fatal(err)
	}
	seen := func(w http.ResponseWriter, r *http.Request) error {
		p, _ := auth.PrincipalFrom(r.Context())
		return httpapi.WriteJSON(w, http.StatusCreated, map[string]string{"key": p.Key(), "project": auth.ProjectFrom(r.Context()),
			"idempotency": httpapi.RequestKey(r)})
	}
	api.Handle("POST /api/v1/widgets", seen)
	api.Handle("POST /api/v1/providers", seen) // shared configuration: admins only

	type answer struct {
		status int
		seen   map[string]string
	}
	inProcess := func(ctx context.Context, method, path string, headers ...string) answer {
		req := httptest.NewRequestWithContext(ctx, method, path, strings.NewReader("{}"))
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		a := answer{status: rec.Code}
		_ = json.Unmarshal(rec.Body.Bytes(), &a.seen)
		return a
	}
	acting := httpapi.ActAs(context.Background(), alice)

	byBearer := inProcess(context.Background(), "POST", "/api/v1/widgets", "Authorization", "Bearer good", "Idempotency-Key", "k1")
	asAlice := inProcess(acting, "POST", "/api/v1/widgets", "Idempotency-Key", "k1")
	if asAlice.status != http.StatusCreated || asAlice.seen["key"] != alice.Key() || asAlice.seen["project"] != "team-a" {
		t.Fatalf("an in-process request acting as alice: %d %v, want 201 as %s in team-a", asAlice.status, asAlice.seen, alice.Key())
	}
	if asAlice.seen["idempotency"] == "" || asAlice.seen["idempotency"] != byBearer.seen["idempotency"] {
		t.Errorf("Idempotency-Key owner: acting %q, by bearer %q; want the same", asAlice.seen["idempotency"], byBearer.seen["idempotency"])
	}
	if a := inProcess(acting, "POST", "/api/v1/widgets", auth.ProjectHeader, "team-b"); a.status != http.StatusForbidden {
		t.Errorf("acting as alice in another project: %d, want 403", a.status)
	}
	if a := inProcess(acting, "POST", "/api/v1/providers"); a.status != http.StatusForbidden {
		t.Errorf("acting as a user on an admin's route: %d, want 403", a.status)
	}
	audit.mu.Lock()
	for _, got := range audit.begun {
		if !strings.HasPrefix(got, alice.Key()+" ") {
			t.Errorf("audit actor %q, want %s", got, alice.Key())
		}
	}
	if len(audit.begun) != 4 {
		t.Errorf("audited %d requests, want 4: %v", len(audit.begun), audit.begun)
	}
	audit.mu.Unlock()

	// Over the network nothing a client sends stands in for a token.
	srv := httptest.NewServer(api)
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/widgets", strings.NewReader("{}"))
	req.Header.Set("Cookie", "steward_session=anything")
	req.Header.Set("X-Act-As", alice.Key())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a remote request without a token: %d, want 401", resp.StatusCode)
	}
}
