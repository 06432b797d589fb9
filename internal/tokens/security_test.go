package tokens_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// A project's users and admins make things only by ordering: the SP
// Resource Manager's instances, whose spec goes to the provider as it is
// (a process provider's command, say), are written by admins alone.
func TestAuth_OnlyAdminsWriteServiceTypeInstances(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		alice := e.token(t, root, map[string]any{"name": "alice", "role": "user", "project": "team-a"})
		lead := e.token(t, root, map[string]any{"name": "lead", "role": "project_admin", "project": "team-a"})
		create := map[string]any{"provider_name": "vm-sp", "spec": map[string]any{"service_type": "vm",
			"vcpu": map[string]any{"count": 1}, "memory": map[string]any{"size": "1GB"},
			"guest_os": map[string]any{"type": "fedora-39"}}}
		for _, tok := range []string{alice, lead} {
			e.as(t, tok, "POST", "/api/v1/service-type-instances?id=direct", create).
				WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		}
		e.as(t, root, "POST", "/api/v1/service-type-instances?id=direct", create).Want(t, http.StatusAccepted)
		for _, tok := range []string{alice, lead} {
			e.as(t, tok, "DELETE", "/api/v1/service-type-instances/direct", nil).
				WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		}
		// What they may do instead: order.
		e.as(t, alice, "POST", "/api/v1/catalog-item-instances?id=web", map[string]any{"catalog_item_id": "small-vm"}).
			Want(t, http.StatusCreated)
	})
}

// An Idempotency-Key belongs to the token that sent it, in its project:
// a token named like another (a project admin's called "admin"), or a
// user of the same name in another project, sending the same key and body
// runs its own request instead of receiving the other's answer, and the
// audit log tells the two apart by their tokens.
func TestIdempotency_KeysBelongToOneTokenInOneProject(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		admin := e.token(t, root, map[string]any{"name": "admin", "role": "admin"})
		impostor := e.token(t, root, map[string]any{"name": "admin", "role": "project_admin", "project": "team-a"})

		type created struct {
			ID, Token, Project string
		}
		body := map[string]any{"name": "ci", "role": "user", "project": "team-a"}
		var first, second created
		e.as(t, admin, "POST", "/api/v1/tokens", body, "Idempotency-Key", "k1").Want(t, http.StatusCreated).JSON(t, &first)
		got := e.as(t, impostor, "POST", "/api/v1/tokens", body, "Idempotency-Key", "k1").Want(t, http.StatusCreated)
		got.JSON(t, &second)
		if got.Header.Get("Idempotent-Replayed") != "" || second.ID == first.ID || second.Token == first.Token {
			t.Fatalf("the impostor's create was answered with the admin's token (%s, replayed %q)", second.ID,
				got.Header.Get("Idempotent-Replayed"))
		}

		bobA := e.token(t, root, map[string]any{"name": "bob", "role": "user", "project": "team-a"})
		bobB := e.token(t, root, map[string]any{"name": "bob", "role": "user", "project": "team-b"})
		order := map[string]any{"catalog_item_id": "small-vm"}
		var orderB, orderA created
		e.as(t, bobB, "POST", "/api/v1/catalog-item-instances", order, "Idempotency-Key", "k2").
			Want(t, http.StatusCreated).JSON(t, &orderB)
		got = e.as(t, bobA, "POST", "/api/v1/catalog-item-instances", order, "Idempotency-Key", "k2").
			Want(t, http.StatusCreated)
		got.JSON(t, &orderA)
		if got.Header.Get("Idempotent-Replayed") != "" || orderA.Project != "team-a" || orderB.Project != "team-b" {
			t.Fatalf("team-a's bob got an order of project %q (replayed %q); team-b's is in %q", orderA.Project,
				got.Header.Get("Idempotent-Replayed"), orderB.Project)
		}
		// An admin's key is its own in each project it names, too.
		e.as(t, admin, "POST", "/api/v1/catalog-item-instances", order, "Idempotency-Key", "k3",
			"Steward-Project", "team-a").Want(t, http.StatusCreated)
		got = e.as(t, admin, "POST", "/api/v1/catalog-item-instances", order, "Idempotency-Key", "k3",
			"Steward-Project", "team-b").Want(t, http.StatusCreated)
		var inB created
		if got.JSON(t, &inB); inB.Project != "team-b" || got.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("the admin's create in team-b answered team-a's (project %q)", inB.Project)
		}

		// The audit log names each by its token.
		var whoA, whoI struct {
			TokenID string `json:"token_id"`
		}
		e.as(t, admin, "GET", "/api/v1/whoami", nil).Want(t, http.StatusOK).JSON(t, &whoA)
		e.as(t, impostor, "GET", "/api/v1/whoami", nil).Want(t, http.StatusOK).JSON(t, &whoI)
		if whoA.TokenID == "" || whoA.TokenID == whoI.TokenID {
			t.Fatalf("whoami names the tokens %q and %q", whoA.TokenID, whoI.TokenID)
		}
		var audit struct {
			Results []struct {
				Action string
				Actor  struct{ Type, ID, Token string }
			}
		}
		e.as(t, root, "GET", "/api/v1/audit-events?action=token.create&actor=token:"+whoI.TokenID, nil).
			Want(t, http.StatusOK).JSON(t, &audit)
		if len(audit.Results) != 1 || audit.Results[0].Actor.Token != whoI.TokenID || audit.Results[0].Actor.ID != "admin" {
			t.Fatalf("the impostor's token creates in the audit log: %+v, want exactly one, by its token", audit.Results)
		}
	})
}

// A token's secret is shown once: a replay of its create answers the token
// without it, and no idempotency record holds it.
func TestTokens_ReplayedCreateHoldsNoSecret(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		body := map[string]any{"name": "ci", "role": "user", "project": "team-a"}
		var first, again struct{ ID, Token string }
		e.as(t, root, "POST", "/api/v1/tokens", body, "Idempotency-Key", "once").Want(t, http.StatusCreated).JSON(t, &first)
		if !strings.HasPrefix(first.Token, "stw_") {
			t.Fatalf("the first answer has no secret: %q", first.Token)
		}
		got := e.as(t, root, "POST", "/api/v1/tokens", body, "Idempotency-Key", "once").Want(t, http.StatusCreated)
		got.JSON(t, &again)
		if got.Header.Get("Idempotent-Replayed") != "true" || again.ID != first.ID || again.Token != "" {
			t.Fatalf("replay: id %q (want %q), token %q (want none), replayed %q", again.ID, first.ID, again.Token,
				got.Header.Get("Idempotent-Replayed"))
		}
		rows, err := e.s.DB().Query(context.Background(), "SELECT response_body FROM idempotency_keys")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var stored []byte
			if err := rows.Scan(&stored); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(stored, []byte(first.Token)) {
				t.Fatalf("an idempotency record holds the token's secret: %s", stored)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		// The secret still works.
		e.as(t, first.Token, "GET", "/api/v1/whoami", nil).Want(t, http.StatusOK)
	})
}

// A provider's registration takes orders only once its endpoint answered a
// health check (it was healthy at once before, and the next orders of every
// project went to it), and a provider's token registers only for the
// service types an admin granted it.
func TestProviders_RegistrationIsCheckedAndGranted(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		sick := providertest.New(t)
		sick.SetHealth(false)
		type view struct{ Status string }
		var got view
		e.as(t, root, "POST", "/api/v1/providers", sick.Registration("sick-sp", "vm")).
			Want(t, http.StatusCreated).JSON(t, &got)
		if got.Status == "healthy" {
			t.Fatalf("a provider that answers unhealthy registered %q", got.Status)
		}
		// The next vm orders all go to vm-sp, which answered its check.
		for i := range 3 {
			var order struct {
				ProviderName string `json:"provider_name"`
			}
			e.as(t, root, "POST", "/api/v1/catalog-item-instances", map[string]any{"catalog_item_id": "small-vm"}).
				Want(t, http.StatusCreated).JSON(t, &order)
			if order.ProviderName != "vm-sp" {
				t.Fatalf("order %d went to %q, want vm-sp (sick-sp was never healthy)", i, order.ProviderName)
			}
		}
		sick.SetHealth(true)
		poll.Until(t, "sick-sp's next check finds it healthy", func() bool {
			e.as(t, root, "GET", "/api/v1/providers/sick-sp", nil).Want(t, http.StatusOK).JSON(t, &got)
			return got.Status == "healthy"
		})

		// Grants.
		e.as(t, root, "POST", "/api/v1/tokens", map[string]any{"name": "db-sp", "role": "service_account",
			"provider": "db-sp"}).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		dbSP := e.token(t, root, map[string]any{"name": "db-sp", "role": "service_account", "provider": "db-sp",
			"service_types": []string{"database"}})
		db := providertest.New(t)
		e.as(t, dbSP, "POST", "/api/v1/providers", db.Registration("db-sp", "database", "vm")).
			WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		e.as(t, dbSP, "POST", "/api/v1/providers", db.Registration("db-sp", "database")).Want(t, http.StatusCreated)
		e.as(t, dbSP, "PATCH", "/api/v1/providers/db-sp", map[string]any{"service_types": []string{"vm"}}).
			WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		var p struct {
			ServiceTypes []string `json:"service_types"`
		}
		e.as(t, root, "GET", "/api/v1/providers/db-sp", nil).Want(t, http.StatusOK).JSON(t, &p)
		if len(p.ServiceTypes) != 1 || p.ServiceTypes[0] != "database" {
			t.Errorf("db-sp serves %v, want only its grant", p.ServiceTypes)
		}
	})
}
