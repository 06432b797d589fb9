package tokens_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// root is the static admin token of every test server here.
const root = "root-token"

type env struct {
	s *apitest.Server
	p *providertest.Server
}

// as sends a request with token (none when "") and extra headers.
func (e env) as(t *testing.T, token, method, path string, body any, headers ...string) *apitest.Response {
	t.Helper()
	if token != "" {
		headers = append(headers, "Authorization", "Bearer "+token)
	}
	return e.s.Do(t, method, path, body, headers...)
}

// token makes a token as creator and returns its secret.
func (e env) token(t *testing.T, creator string, body map[string]any) string {
	t.Helper()
	var tok struct{ Token string }
	e.as(t, creator, "POST", "/api/v1/tokens", body).Want(t, http.StatusCreated).JSON(t, &tok)
	if tok.Token == "" {
		t.Fatal("the create answer has no token")
	}
	return tok.Token
}

func setup(t *testing.T, engine store.Engine) env {
	t.Helper()
	s := apitest.Start(t, engine, apitest.Fast, func(c *server.Config) { c.Dev, c.APIToken = false, root })
	e := env{s: s, p: providertest.New(t)}
	e.as(t, root, "POST", "/api/v1/providers", e.p.Registration("vm-sp", "vm")).Want(t, http.StatusCreated)
	e.as(t, root, "POST", "/api/v1/catalog-items?id=small-vm", map[string]any{"service_type": "vm",
		"defaults": map[string]any{"vcpu": map[string]any{"count": 2}, "memory": map[string]any{"size": "2GB"},
			"guest_os": map[string]any{"type": "fedora-39"}}}).Want(t, http.StatusCreated)
	return e
}

// One project cannot see or touch another's orders or operations (404,
// not 403); users cannot change shared configuration (403); no token is
// 401; admins reach any project by naming it.
func TestAuth_ProjectsAreIsolated(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		alice := e.token(t, root, map[string]any{"name": "alice", "role": "user", "project": "team-a"})
		bob := e.token(t, root, map[string]any{"name": "bob", "role": "user", "project": "team-b"})

		e.as(t, alice, "POST", "/api/v1/catalog-item-instances?id=web", map[string]any{"catalog_item_id": "small-vm"}).
			Want(t, http.StatusCreated)
		var order struct{ Project string }
		e.as(t, alice, "GET", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusOK).JSON(t, &order)
		if order.Project != "team-a" {
			t.Errorf("alice's order is in project %q, want team-a", order.Project)
		}
		var op struct{ ID string }
		e.as(t, alice, "POST", "/api/v1/catalog-item-instances/web:rehydrate", nil).Want(t, http.StatusAccepted).JSON(t, &op)

		for _, r := range []struct{ method, path string }{
			{"GET", "/api/v1/catalog-item-instances/web"},
			{"PATCH", "/api/v1/catalog-item-instances/web"},
			{"DELETE", "/api/v1/catalog-item-instances/web"},
			{"GET", "/api/v1/operations/" + op.ID},
			{"GET", "/api/v1/catalog-item-instances/web/credentials"},
		} {
			var body any
			if r.method == "PATCH" {
				body = map[string]any{"labels": map[string]any{"x": "y"}}
			}
			if got := e.as(t, bob, r.method, r.path, body); got.Status != http.StatusNotFound {
				t.Errorf("bob %s %s: %d, want 404", r.method, r.path, got.Status)
			}
		}
		var list struct{ Results []any }
		e.as(t, bob, "GET", "/api/v1/catalog-item-instances", nil).Want(t, http.StatusOK).JSON(t, &list)
		if len(list.Results) != 0 {
			t.Errorf("bob lists %d orders, want none of alice's", len(list.Results))
		}
		e.as(t, bob, "GET", "/api/v1/operations", nil).Want(t, http.StatusOK).JSON(t, &list)
		if len(list.Results) != 0 {
			t.Errorf("bob lists %d operations, want none of alice's", len(list.Results))
		}

		// Naming another project, changing shared configuration, reading the
		// audit log: refused.
		e.as(t, bob, "GET", "/api/v1/catalog-item-instances/web", nil, "Steward-Project", "team-a").
			WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		e.as(t, alice, "POST", "/api/v1/catalog-items", map[string]any{"service_type": "vm"}).
			WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		e.as(t, alice, "DELETE", "/api/v1/providers/vm-sp", nil).WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		e.as(t, alice, "GET", "/api/v1/audit-events", nil).WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		e.as(t, alice, "POST", "/api/v1/tokens", map[string]any{"name": "eve", "role": "admin"}).
			WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		// Everyone reads the catalog.
		e.as(t, bob, "GET", "/api/v1/catalog-items/small-vm", nil).Want(t, http.StatusOK)
		// No token, a wrong one.
		e.as(t, "", "GET", "/api/v1/catalog-item-instances", nil).WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")
		e.as(t, "stw_nope_00", "GET", "/api/v1/catalog-item-instances", nil).
			WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")

		// An admin reaches team-a's order by naming the project.
		e.as(t, root, "GET", "/api/v1/catalog-item-instances/web", nil, "Steward-Project", "team-a").Want(t, http.StatusOK)
		e.as(t, root, "GET", "/api/v1/catalog-item-instances/web", nil).WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")

		// The refusals are in the audit log, by who was refused.
		var audit struct {
			Results []struct {
				Action, Outcome string
				Actor           struct{ Type, ID string }
			}
		}
		e.as(t, root, "GET", "/api/v1/audit-events?max_page_size=1000&actor=user:alice", nil).
			Want(t, http.StatusOK).JSON(t, &audit)
		denied := map[string]bool{}
		for _, r := range audit.Results {
			if r.Outcome == "denied" {
				denied[r.Action] = true
			}
		}
		if !denied["catalog_item.create"] || !denied["provider.delete"] || !denied["token.create"] {
			t.Errorf("alice's denied actions in the audit log: %v; want catalog_item.create, provider.delete, token.create",
				denied)
		}
		// A read of credentials is audited whatever its outcome: bob's
		// attempt on an order he cannot see too.
		e.as(t, root, "GET", "/api/v1/audit-events?max_page_size=1000&actor=user:bob", nil).
			Want(t, http.StatusOK).JSON(t, &audit)
		var credentialReads []string
		for _, r := range audit.Results {
			if r.Action == "catalog_item_instance.credentials.read" {
				credentialReads = append(credentialReads, r.Outcome)
			}
		}
		if len(credentialReads) != 1 || credentialReads[0] != "error" {
			t.Errorf("bob's reads of credentials in the audit log: %v; want one error", credentialReads)
		}
	})
}

// A provider's service account reports the status of its own instances
// only; users cannot report at all.
func TestAuth_OnlyTheOwningProviderReportsStatus(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		vmSP := e.token(t, root, map[string]any{"name": "vm-sp", "role": "service_account", "provider": "vm-sp", "service_types": []string{"vm"}})
		other := e.token(t, root, map[string]any{"name": "other-sp", "role": "service_account", "provider": "other-sp", "service_types": []string{"*"}})
		user := e.token(t, root, map[string]any{"name": "carol", "role": "user", "project": "default"})
		e.as(t, root, "POST", "/api/v1/service-type-instances?id=i1", map[string]any{"provider_name": "vm-sp",
			"spec": map[string]any{"service_type": "vm", "vcpu": map[string]any{"count": 1},
				"memory": map[string]any{"size": "1GB"}, "guest_os": map[string]any{"type": "fedora-39"}}}).
			Want(t, http.StatusAccepted)
		report := map[string]any{"status": "RUNNING", "observed_time": time.Now().UTC().Format(time.RFC3339Nano)}
		e.as(t, other, "PUT", "/api/v1/service-type-instances/i1/status", report).
			WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		e.as(t, user, "PUT", "/api/v1/service-type-instances/i1/status", report).
			WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		e.as(t, vmSP, "PUT", "/api/v1/service-type-instances/i1/status", report).Want(t, http.StatusOK)
		// Nor does a provider's account register another provider, or order.
		e.as(t, other, "POST", "/api/v1/providers", e.p.Registration("vm-sp", "vm")).
			WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		e.as(t, vmSP, "POST", "/api/v1/catalog-item-instances", map[string]any{"catalog_item_id": "small-vm"}).
			WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		e.as(t, vmSP, "POST", "/api/v1/providers", e.p.Registration("vm-sp", "vm")).Want(t, http.StatusOK)
		// Credentials are for an order's users, not for machines.
		e.as(t, vmSP, "GET", "/api/v1/catalog-item-instances/web/credentials", nil).
			WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
	})
}

// A revoked token stops working at once; an expired one at its time; a
// project admin hands out tokens for its own project only, and sees only
// those.
func TestAuth_TokenLifecycle(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		lead := e.token(t, root, map[string]any{"name": "lead", "role": "project_admin", "project": "team-a"})
		dev := e.token(t, lead, map[string]any{"name": "dana", "role": "user", "project": "team-a"})
		e.as(t, lead, "POST", "/api/v1/tokens", map[string]any{"name": "x", "role": "user", "project": "team-b"}).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		e.as(t, lead, "POST", "/api/v1/tokens", map[string]any{"name": "x", "role": "admin"}).
			WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		e.as(t, root, "POST", "/api/v1/tokens", map[string]any{"name": "x", "role": "user"}).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		e.as(t, root, "POST", "/api/v1/tokens", map[string]any{"name": "x", "role": "service_account"}).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		e.token(t, root, map[string]any{"name": "other", "role": "user", "project": "team-b"})

		type tok struct{ ID, Name, State, Token string }
		var list struct{ Results []tok }
		e.as(t, lead, "GET", "/api/v1/tokens", nil).Want(t, http.StatusOK).JSON(t, &list)
		if len(list.Results) != 2 {
			t.Fatalf("the project admin lists %+v; want its own and dana's", list.Results)
		}
		var dana tok
		for _, r := range list.Results {
			if r.Token != "" {
				t.Errorf("a listed token shows its secret: %+v", r)
			}
			if r.Name == "dana" {
				dana = r
			}
		}
		e.as(t, dev, "GET", "/api/v1/catalog-item-instances", nil).Want(t, http.StatusOK)
		// Unknown ids, and another project's token, are not found.
		var all struct{ Results []tok }
		e.as(t, root, "GET", "/api/v1/tokens", nil).Want(t, http.StatusOK).JSON(t, &all)
		for _, r := range all.Results {
			if r.Name == "other" {
				e.as(t, lead, "GET", "/api/v1/tokens/"+r.ID, nil).WantProblem(t, http.StatusNotFound, "TOKEN_NOT_FOUND")
				e.as(t, lead, "DELETE", "/api/v1/tokens/"+r.ID, nil).WantProblem(t, http.StatusNotFound, "TOKEN_NOT_FOUND")
			}
		}
		e.as(t, root, "GET", "/api/v1/tokens/nope", nil).WantProblem(t, http.StatusNotFound, "TOKEN_NOT_FOUND")
		e.as(t, root, "DELETE", "/api/v1/tokens/nope", nil).WantProblem(t, http.StatusNotFound, "TOKEN_NOT_FOUND")
		e.as(t, root, "POST", "/api/v1/tokens", map[string]any{"name": "x", "role": "user", "project": "a",
			"ttl_seconds": "soon"}).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		var revoked tok
		e.as(t, lead, "DELETE", "/api/v1/tokens/"+dana.ID, nil).Want(t, http.StatusOK).JSON(t, &revoked)
		if revoked.State != "revoked" {
			t.Errorf("revoked token's state %q", revoked.State)
		}
		e.as(t, dev, "GET", "/api/v1/catalog-item-instances", nil).WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")

		short := e.token(t, root, map[string]any{"name": "temp", "role": "user", "project": "team-a", "ttl_seconds": 1})
		e.as(t, short, "GET", "/api/v1/catalog-item-instances", nil).Want(t, http.StatusOK)
		poll.Until(t, "the 1 s token expires", func() bool {
			return e.as(t, short, "GET", "/api/v1/catalog-item-instances", nil).Status == http.StatusUnauthorized
		})
	})
}

// Issue 22, item 8: :forceDelete skips the adapters' confirmation of a
// deletion, which the contract gives to admins only; a user of the order's
// project and its project admin get 403 PERMISSION_DENIED.
func TestAuth_OnlyAdminsForceDelete(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		alice := e.token(t, root, map[string]any{"name": "alice", "role": "user", "project": "team-a"})
		boss := e.token(t, root, map[string]any{"name": "boss", "role": "project_admin", "project": "team-a"})
		e.as(t, alice, "POST", "/api/v1/catalog-item-instances?id=web", map[string]any{"catalog_item_id": "small-vm"}).
			Want(t, http.StatusCreated)
		e.as(t, alice, "DELETE", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusAccepted)

		url := "/api/v1/catalog-item-instances/web:forceDelete"
		for name, token := range map[string]string{"user": alice, "project admin": boss} {
			p := e.as(t, token, "POST", url, map[string]any{"reason": "impatient"}).
				WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
			if !strings.Contains(p.Detail, "only admins") {
				t.Errorf("%s's refusal says %q, want it to say only admins force a deletion", name, p.Detail)
			}
		}
		e.as(t, root, "POST", url, map[string]any{"reason": "the adapter is gone"}, "Steward-Project", "team-a").
			Want(t, http.StatusNoContent)
		var order struct{ State string }
		e.as(t, alice, "GET", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusOK).JSON(t, &order)
		if order.State != "terminated" {
			t.Errorf("after the admin's force delete the order is %q, want terminated", order.State)
		}
	})
}
