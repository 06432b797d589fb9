package tokens_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// A service account reads the shared configuration and, of a project's
// rows, only what its machine works on: a provider its own instances (not
// another provider's, not the orders with their original requests), an
// adapter the orders it follows. A provider's token read all 22 project
// routes of every project before.
func TestAuth_ServiceAccountsReadOnlyWhatTheyWorkOn(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		other := providertest.New(t)
		e.as(t, root, "POST", "/api/v1/providers", other.Registration("other-sp", "vm")).Want(t, http.StatusCreated)
		vmSP := e.token(t, root, map[string]any{"name": "vm-sp", "role": "service_account", "provider": "vm-sp",
			"service_types": []string{"vm"}})
		dns := e.token(t, root, map[string]any{"name": "dns", "role": "service_account", "adapter": "dns"})
		teamB := []string{"Steward-Project", "team-b"}
		spec := map[string]any{"service_type": "vm", "vcpu": map[string]any{"count": 1},
			"memory": map[string]any{"size": "1GB"}, "guest_os": map[string]any{"type": "fedora-39"}}
		for id, prov := range map[string]string{"mine": "vm-sp", "theirs": "other-sp"} {
			e.as(t, root, "POST", "/api/v1/service-type-instances?id="+id,
				map[string]any{"provider_name": prov, "spec": spec}, teamB...).Want(t, http.StatusAccepted)
		}
		var order struct{ ID string }
		e.as(t, root, "POST", "/api/v1/catalog-item-instances?id=web", map[string]any{"catalog_item_id": "small-vm"},
			teamB...).Want(t, http.StatusCreated).JSON(t, &order)

		// The provider: its own instances only.
		var list struct {
			Results []struct {
				ID           string `json:"id"`
				ProviderName string `json:"provider_name"`
			}
		}
		e.as(t, vmSP, "GET", "/api/v1/service-type-instances", nil, teamB...).Want(t, http.StatusOK).JSON(t, &list)
		if !slices.ContainsFunc(list.Results, func(r struct {
			ID           string `json:"id"`
			ProviderName string `json:"provider_name"`
		}) bool {
			return r.ID == "mine"
		}) {
			t.Errorf("vm-sp does not list its own instance: %+v", list.Results)
		}
		for _, r := range list.Results {
			if r.ProviderName != "vm-sp" {
				t.Errorf("vm-sp lists %s of provider %s", r.ID, r.ProviderName)
			}
		}
		e.as(t, vmSP, "GET", "/api/v1/service-type-instances/mine", nil, teamB...).Want(t, http.StatusOK)
		e.as(t, vmSP, "GET", "/api/v1/service-type-instances/theirs", nil, teamB...).
			WantProblem(t, http.StatusNotFound, "INSTANCE_NOT_FOUND")
		e.as(t, vmSP, "GET", "/api/v1/service-type-instances?provider_name=other-sp", nil, teamB...).
			WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		for _, path := range []string{"/api/v1/catalog-item-instances", "/api/v1/catalog-item-instances/web",
			"/api/v1/catalog-item-instances/web/events", "/api/v1/resources", "/api/v1/operations",
			"/api/v1/projects/team-b/app-instances/web", "/api/v1/projects/team-b/app-instances/web/repair-operations",
			"/api/v1/audit-events", "/api/v1/tokens"} {
			e.as(t, vmSP, "GET", path, nil, teamB...).WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		}
		// Shared configuration is everyone's to read.
		for _, path := range []string{"/api/v1/providers", "/api/v1/service-types", "/api/v1/catalog-items",
			"/api/v1/policies", "/api/v1/lifecycles"} {
			e.as(t, vmSP, "GET", path, nil, teamB...).Want(t, http.StatusOK)
			e.as(t, dns, "GET", path, nil, teamB...).Want(t, http.StatusOK)
		}

		// The adapter: the orders it follows, in any project, but not their
		// credentials, nor anything else of the project.
		e.as(t, dns, "GET", "/api/v1/catalog-item-instances/web", nil, teamB...).Want(t, http.StatusOK)
		e.as(t, dns, "GET", "/api/v1/catalog-item-instances/web/events", nil, teamB...).Want(t, http.StatusOK)
		for _, path := range []string{"/api/v1/catalog-item-instances/web/credentials", "/api/v1/resources",
			"/api/v1/service-type-instances", "/api/v1/operations", "/api/v1/projects/team-b/app-instances/web"} {
			e.as(t, dns, "GET", path, nil, teamB...).WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		}
	})
}

// A provider's token grants the projects it may serve: a provider
// registered with it is offered only those projects' orders, while one an
// admin registered serves every project.
func TestProviders_ServeOnlyTheirGrantedProjects(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.as(t, root, "POST", "/api/v1/tokens", map[string]any{"name": "ann", "role": "user", "project": "team-a",
			"projects": []string{"team-a"}}).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		e.as(t, root, "POST", "/api/v1/tokens", map[string]any{"name": "a-sp", "role": "service_account",
			"provider": "a-sp", "service_types": []string{"vm"}, "projects": []string{"Team A"}}).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		aSP := e.token(t, root, map[string]any{"name": "a-sp", "role": "service_account", "provider": "a-sp",
			"service_types": []string{"vm"}, "projects": []string{"team-a"}})
		a := providertest.New(t)
		var p struct {
			Projects []string `json:"projects"`
		}
		e.as(t, aSP, "POST", "/api/v1/providers", a.Registration("a-sp", "vm")).Want(t, http.StatusCreated).JSON(t, &p)
		if !slices.Equal(p.Projects, []string{"team-a"}) {
			t.Errorf("a-sp serves %v, want its token's [team-a]", p.Projects)
		}
		e.as(t, root, "GET", "/api/v1/providers/vm-sp", nil).Want(t, http.StatusOK).JSON(t, &p)
		if !slices.Equal(p.Projects, []string{"*"}) {
			t.Errorf("vm-sp, registered by an admin, serves %v, want [*]", p.Projects)
		}

		// a-sp has the fewest instances, so placement would pick it for
		// every order it may serve: team-b's all go to vm-sp instead.
		placed := func(project string) string {
			var order struct {
				ProviderName string `json:"provider_name"`
			}
			e.as(t, root, "POST", "/api/v1/catalog-item-instances", map[string]any{"catalog_item_id": "small-vm"},
				"Steward-Project", project).Want(t, http.StatusCreated).JSON(t, &order)
			return order.ProviderName
		}
		for i := range 3 {
			if got := placed("team-b"); got != "vm-sp" {
				t.Fatalf("team-b's order %d went to %q, want vm-sp (a-sp serves team-a only)", i, got)
			}
		}
		if got := placed("team-a"); got != "a-sp" {
			t.Errorf("team-a's order went to %q, want a-sp (fewest instances)", got)
		}
	})
}
