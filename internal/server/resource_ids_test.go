package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/api"
	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/resourceid"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// idCreate is a create that takes a client-chosen ?id=.
type idCreate struct {
	path string
	// body is a valid body; n differs from call to call, for the members
	// (names, priorities) that must be unique.
	body func(n int) any
	// created is a successful create's status.
	created int
}

// idCreates are every create that takes ?id=. Their bodies need the
// fixtures of startWithFixtures.
var idCreates = map[string]idCreate{
	"ServiceTypes": {path: "/api/v1/service-types", created: http.StatusCreated, body: func(int) any {
		return map[string]any{"schema": map[string]any{"type": "object",
			"properties": map[string]any{"name": map[string]any{"type": "string"}}}}
	}},
	"CatalogItems": {path: "/api/v1/catalog-items", created: http.StatusCreated, body: func(int) any {
		return map[string]any{"service_type": "vm"}
	}},
	"Lifecycles": {path: "/api/v1/lifecycles", created: http.StatusCreated, body: func(int) any { return lifecycleBody() }},
	"Orders": {path: "/api/v1/catalog-item-instances", created: http.StatusCreated, body: func(int) any {
		return map[string]any{"catalog_item_id": "aep-vm"}
	}},
	"Policies": {path: "/api/v1/policies", created: http.StatusCreated, body: func(n int) any {
		return map[string]any{"display_name": fmt.Sprintf("aep %d", n), "policy_type": "USER", "priority": 100 + n,
			"label_selector": map[string]string{"aep-test": "never"}, "rego_code": fmt.Sprintf("package aep%d\nmain := {}", n)}
	}},
	"Providers": {path: "/api/v1/providers", created: http.StatusCreated, body: nil}, // set by startWithFixtures
	"ServiceTypeInstances": {path: "/api/v1/service-type-instances", created: http.StatusAccepted, body: func(n int) any {
		return map[string]any{"provider_name": "vm-sp", "spec": map[string]any{"service_type": "vm",
			"vcpu": map[string]any{"count": 1}, "memory": map[string]any{"size": "1GB"},
			"guest_os": map[string]any{"type": "fedora-39"}, "metadata": map[string]any{"name": fmt.Sprintf("aep-%d", n)}}}
	}},
}

func lifecycleBody() map[string]any {
	return map[string]any{
		"initial_state": "start",
		"states": []map[string]any{
			{"name": "start", "model_state": "candidate"},
			{"name": "up", "model_state": "active", "export_resources": true},
			{"name": "terminated", "model_state": "inactive", "deleted": true},
		},
		"transfers": []map[string]any{
			{"source": "start", "target": "up", "trigger": "auto", "target_operation": "promote"},
			{"source": "up", "target": "terminated", "trigger": "on_delete"},
		},
	}
}

// startWithFixtures starts a server with a provider vm-sp for vm and a
// catalog item aep-vm to order from, and returns the provider.
func startWithFixtures(t *testing.T, engine store.Engine) (*apitest.Server, *providertest.Server) {
	t.Helper()
	s := apitest.Start(t, engine, apitest.Fast)
	p := providertest.New(t)
	s.Do(t, "POST", "/api/v1/providers", p.Registration("vm-sp", "vm")).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-items?id=aep-vm", map[string]any{"service_type": "vm", "defaults": map[string]any{
		"vcpu": map[string]any{"count": 1}, "memory": map[string]any{"size": "1GB"}, "guest_os": map[string]any{"type": "fedora-39"},
	}}).Want(t, http.StatusCreated)
	return s, p
}

// AEP-122: a client-chosen id starts with a lowercase letter, or is a UUID
// (the form of the ids the server generates). Every create that takes ?id=
// refuses any other with 400 INVALID_ARGUMENT naming the field id.
func TestCreate_ClientIDsFollowAEP122(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s, p := startWithFixtures(t, engine)
		n := 0
		for name, c := range idCreates {
			body := c.body
			if name == "Providers" {
				body = func(n int) any { return p.Registration(fmt.Sprintf("aep-sp-%d", n), "vm") }
			}
			t.Run(name, func(t *testing.T) {
				for _, id := range []string{"123-test", "1", "-test", "test-", "Test", "test_1",
					"a" + strings.Repeat("b", 63), strings.ToUpper(uuid.NewString())} {
					n++
					r := s.Do(t, "POST", c.path+"?id="+id, body(n))
					pr := r.WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
					if len(pr.Fields) != 1 || pr.Fields[0]["field"] != "id" || pr.Fields[0]["message"] == "" {
						t.Errorf("?id=%s: fields %v, want one naming id", id, pr.Fields)
					}
				}
				for _, id := range []string{"test-123", "a", "a" + strings.Repeat("b", 62), uuid.NewString()} {
					n++
					var got struct {
						ID string `json:"id"`
					}
					s.Do(t, "POST", c.path+"?id="+id, body(n)).Want(t, c.created).JSON(t, &got)
					if got.ID != id {
						t.Errorf("?id=%s created %q", id, got.ID)
					}
				}
			})
		}

		t.Run("LifecycleBodyID", func(t *testing.T) {
			// The body's id is checked by the lifecycle itself: the
			// document gives it no pattern, since a replacement sends back
			// the id it got, whatever it is.
			body := lifecycleBody()
			body["id"] = "123-test"
			pr := s.Do(t, "POST", "/api/v1/lifecycles", body).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
			if len(pr.Fields) != 1 || pr.Fields[0]["field"] != "id" || pr.Fields[0]["message"] != resourceid.Message {
				t.Errorf("fields %v, want id: %s", pr.Fields, resourceid.Message)
			}
			body["id"] = "from-body"
			s.Do(t, "POST", "/api/v1/lifecycles", body).Want(t, http.StatusCreated)
		})

		t.Run("RehydrateNewInstanceID", func(t *testing.T) {
			var o struct {
				InstanceID string `json:"instance_id"`
			}
			s.Do(t, "POST", "/api/v1/catalog-item-instances?id=to-rehydrate", idCreates["Orders"].body(0)).
				Want(t, http.StatusCreated).JSON(t, &o)
			for _, id := range []string{"123-test", "Test", "test-"} {
				pr := s.Do(t, "POST", "/api/v1/resources/"+o.InstanceID+":rehydrate", map[string]any{"new_instance_id": id}).
					WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
				if len(pr.Fields) != 1 || pr.Fields[0]["field"] != "new_instance_id" {
					t.Errorf("new_instance_id %q: fields %v, want new_instance_id", id, pr.Fields)
				}
			}
		})
	})
}

// Ids stored before AEP-122 (here: renamed in the database) still name
// their resources: the rule is for new ids, not for reading, changing or
// deleting what exists.
func TestCreate_IDsFromBeforeAEP122StillServed(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s, p := startWithFixtures(t, engine)
		cases := []struct {
			name, table, create string
			body                any
			change              func(path string) *apitest.Response
		}{
			{name: "Policies", table: "policies", create: "/api/v1/policies", body: idCreates["Policies"].body(1),
				change: func(path string) *apitest.Response {
					return s.Do(t, "PATCH", path, map[string]any{"display_name": "renamed", "priority": 7})
				}},
			{name: "Providers", table: "providers", create: "/api/v1/providers", body: p.Registration("old-sp", "vm"),
				change: func(path string) *apitest.Response {
					return s.Do(t, "PATCH", path, map[string]any{"metadata": map[string]string{"region": "eu"}})
				}},
			{name: "CatalogItems", table: "catalog_items", create: "/api/v1/catalog-items", body: idCreates["CatalogItems"].body(1),
				change: func(path string) *apitest.Response {
					return s.Do(t, "PATCH", path, map[string]any{"display_name": "renamed"})
				}},
			{name: "Lifecycles", table: "lifecycles", create: "/api/v1/lifecycles", body: idCreates["Lifecycles"].body(1),
				change: func(path string) *apitest.Response { return s.Do(t, "PUT", path, idCreates["Lifecycles"].body(1)) }},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s.Do(t, "POST", c.create+"?id=legacy", c.body).Want(t, http.StatusCreated)
				if _, err := s.DB().Exec(context.Background(),
					"UPDATE "+c.table+" SET id = '123-legacy' WHERE id = 'legacy'"); err != nil {
					t.Fatal(err)
				}
				path := c.create + "/123-legacy"
				s.Do(t, "GET", path, nil).Want(t, http.StatusOK)
				c.change(path).Want(t, http.StatusOK)
				s.Do(t, "DELETE", path, nil).Want(t, http.StatusNoContent)
				s.Do(t, "GET", path, nil).Want(t, http.StatusNotFound)
			})
		}
	})
}

// The document's pattern for every ?id= (each create's) and for a
// rehydration's new_instance_id is the rule's (resourceid.APIPattern), so
// the validator in front of the handlers refuses what they would.
func TestOpenAPI_ClientIDsUseTheAEP122Pattern(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	creates := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			param := op.Parameters.GetByInAndName(openapi3.ParameterInQuery, "id")
			if param == nil {
				continue
			}
			creates[method+" "+path] = true
			if got := param.Schema.Value.Pattern; got != resourceid.APIPattern {
				t.Errorf("%s %s: ?id= pattern %q, want %q", method, path, got, resourceid.APIPattern)
			}
			if !strings.Contains(param.Description, "AEP-122") {
				t.Errorf("%s %s: ?id= description %q does not name AEP-122", method, path, param.Description)
			}
		}
	}
	for name, c := range idCreates {
		if !creates["POST "+c.path] {
			t.Errorf("%s: POST %s has no ?id= in the document", name, c.path)
		}
	}
	if len(creates) != len(idCreates) {
		t.Errorf("the document has ?id= on %v; the tests cover %d creates", creates, len(idCreates))
	}
	rehydrate := doc.Components.Schemas["RehydrateRequest"].Value.Properties["new_instance_id"].Value
	if rehydrate.Pattern != resourceid.APIPattern {
		t.Errorf("new_instance_id pattern %q, want %q", rehydrate.Pattern, resourceid.APIPattern)
	}
}
