package server_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// immutableUpdate is an update route of a resource with members fixed at
// create, and how to try changing each.
type immutableUpdate struct {
	// method and path are the update route's; path names the resource
	// created before the rows run.
	method, path string
	// create makes the resource (nil: a fixture of startWithFixtures).
	create func(t *testing.T, s *apitest.Server)
	// body is a valid update that changes the mutable member, with
	// member and value; change says how to see that mutable change in a
	// GET answer.
	body   func() map[string]any
	change func(got map[string]any) bool
	// changed are the immutable members and a value other than the
	// resource's.
	changed map[string]any
}

func immutableUpdates() map[string]immutableUpdate {
	when := "2001-02-03T04:05:06Z"
	renamed := func(name string) func() map[string]any {
		return func() map[string]any { return map[string]any{"display_name": name} }
	}
	named := func(name string) func(map[string]any) bool {
		return func(got map[string]any) bool { return got["display_name"] == name }
	}
	return map[string]immutableUpdate{
		"/api/v1/policies/{policy_id}": {method: "PATCH", path: "/api/v1/policies/imm-policy",
			create: func(t *testing.T, s *apitest.Server) {
				s.Do(t, "POST", "/api/v1/policies?id=imm-policy", idCreates["Policies"].body(900)).Want(t, http.StatusCreated)
			},
			body: renamed("renamed policy"), change: named("renamed policy"),
			changed: map[string]any{"id": "other", "path": "policies/other", "create_time": when, "policy_type": "GLOBAL"}},
		"/api/v1/providers/{provider_id}": {method: "PATCH", path: "/api/v1/providers/vm-sp",
			body:   func() map[string]any { return map[string]any{"metadata": map[string]any{"zone": "b"}} },
			change: func(got map[string]any) bool { return fmt.Sprint(got["metadata"]) == "map[zone:b]" },
			changed: map[string]any{"id": "other-sp", "path": "providers/other-sp", "create_time": when,
				"name": "other-sp"}},
		"/api/v1/service-types/{service_type_id}": {method: "PUT", path: "/api/v1/service-types/imm-type",
			create: func(t *testing.T, s *apitest.Server) {
				s.Do(t, "POST", "/api/v1/service-types?id=imm-type", idCreates["ServiceTypes"].body(0)).Want(t, http.StatusCreated)
			},
			body: func() map[string]any {
				return map[string]any{"schema": map[string]any{"type": "object",
					"properties": map[string]any{"colour": map[string]any{"type": "string"}}}}
			},
			change: func(got map[string]any) bool { return strings.Contains(fmt.Sprint(got["schema"]), "colour") },
			changed: map[string]any{"id": "other", "path": "service-types/other", "create_time": when,
				"builtin": true}},
		"/api/v1/catalog-items/{catalog_item_id}": {method: "PATCH", path: "/api/v1/catalog-items/imm-item",
			create: func(t *testing.T, s *apitest.Server) {
				s.Do(t, "POST", "/api/v1/catalog-items?id=imm-item", idCreates["CatalogItems"].body(0)).Want(t, http.StatusCreated)
			},
			body: renamed("renamed item"), change: named("renamed item"),
			changed: map[string]any{"id": "other", "path": "catalog-items/other", "create_time": when,
				"service_type": "container"}},
		"/api/v1/catalog-item-instances/{catalog_item_instance_id}": {method: "PATCH",
			path: "/api/v1/catalog-item-instances/imm-order",
			create: func(t *testing.T, s *apitest.Server) {
				s.Do(t, "POST", "/api/v1/catalog-item-instances?id=imm-order", idCreates["Orders"].body(0)).Want(t, http.StatusCreated)
			},
			body: renamed("renamed order"), change: named("renamed order"),
			changed: map[string]any{"id": "other", "path": "catalog-item-instances/other", "create_time": when,
				"catalog_item_id": "other-item", "service_type": "container", "project": "other-project",
				"parent_id": "some-parent", "lifecycle": "service"}},
		"/api/v1/lifecycles/{lifecycle_id}": {method: "PUT", path: "/api/v1/lifecycles/imm-lifecycle",
			create: func(t *testing.T, s *apitest.Server) {
				s.Do(t, "POST", "/api/v1/lifecycles?id=imm-lifecycle", lifecycleBody()).Want(t, http.StatusCreated)
			},
			body: func() map[string]any {
				b := lifecycleBody()
				b["states"].([]map[string]any)[1]["label"] = "success"
				return b
			},
			change: func(got map[string]any) bool { return strings.Contains(fmt.Sprint(got["states"]), "success") },
			changed: map[string]any{"id": "other", "path": "lifecycles/other", "create_time": when,
				"builtin": true}},
	}
}

// Issue 46, item 2: an update that gives a member fixed at create (a
// policy's policy_type, a catalog item's service_type, an order's
// catalog_item_id, a provider's name, any resource's id, path and
// create_time) another value is refused with 400 INVALID_ARGUMENT naming it, and
// changes nothing, where it used to answer 200 and keep the old value. The
// same update naming each member with its current value is accepted. The
// members come from api/openapi.yaml (x-steward-immutable), so one listed
// later must get a row here.
func TestUpdate_ImmutableMembersRefused(t *testing.T) {
	t.Parallel()
	updates := immutableUpdates()
	documented := immutableInDocument(t)
	if got, want := slices.Sorted(maps.Keys(updates)), slices.Sorted(maps.Keys(documented)); !slices.Equal(got, want) {
		t.Fatalf("rows cover the updates %q, want every one with x-steward-immutable %q", got, want)
	}
	for path, u := range updates {
		if got, want := slices.Sorted(maps.Keys(u.changed)), documented[path]; !slices.Equal(got, want) {
			t.Errorf("%s: rows change %q, want every immutable member %q", path, got, want)
		}
	}
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s, _ := startWithFixtures(t, engine)
		for _, route := range slices.Sorted(maps.Keys(updates)) {
			u := updates[route]
			t.Run(u.method+" "+route, func(t *testing.T) {
				if u.create != nil {
					u.create(t, s)
				}
				before := getBody(t, s, u.path)
				for _, member := range slices.Sorted(maps.Keys(u.changed)) {
					t.Run(member, func(t *testing.T) {
						body := u.body()
						body[member] = u.changed[member]
						p := s.Do(t, u.method, u.path, body).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
						if msgs := fieldsNamed(p, member); len(p.Fields) != 1 || len(msgs) != 1 ||
							!strings.HasPrefix(msgs[0], "cannot be changed (it is ") {
							t.Errorf("fields = %v, want one: %s: cannot be changed (it is …)", p.Fields, member)
						}
						if !strings.HasPrefix(p.Detail, member+" cannot be changed") {
							t.Errorf("detail = %q, want it to start %q", p.Detail, member+" cannot be changed")
						}
						after := getBody(t, s, u.path)
						if fmt.Sprint(after[member]) != fmt.Sprint(before[member]) {
							t.Errorf("%s = %v after the refused update, want %v", member, after[member], before[member])
						}
						if u.change(after) {
							t.Errorf("the refused update changed the resource: %v", after)
						}
					})
				}

				// Each member with its current value is no change, and a
				// time is its instant, whatever the zone it is written in.
				body := u.body()
				current := getBody(t, s, u.path)
				for member := range u.changed {
					body[member] = current[member]
				}
				created, err := time.Parse(time.RFC3339Nano, fmt.Sprint(current["create_time"]))
				if err != nil {
					t.Fatalf("create_time %v: %v", current["create_time"], err)
				}
				body["create_time"] = created.In(time.FixedZone("CEST", 2*60*60)).Format(time.RFC3339Nano)
				if r := s.Do(t, u.method, u.path, body); r.Status != http.StatusOK {
					t.Fatalf("%s naming the current values: %d %s", u.method, r.Status, r.Body)
				}
				if after := getBody(t, s, u.path); !u.change(after) {
					t.Errorf("the update naming the current values did not apply: %v", after)
				}
			})
		}
	})
}

// immutableInDocument lists each update route's immutable members, as the
// document's resource schemas list them.
func immutableInDocument(t *testing.T) map[string][]string {
	t.Helper()
	doc := openAPIDocument(t)
	found := map[string][]string{}
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for _, method := range []string{http.MethodPut, http.MethodPatch} {
			o := item.GetOperation(method)
			if o == nil || o.Responses.Status(http.StatusOK) == nil {
				continue
			}
			mt := o.Responses.Status(http.StatusOK).Value.Content.Get("application/json")
			if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
				continue
			}
			list, _ := mt.Schema.Value.Extensions["x-steward-immutable"].([]any)
			for _, m := range list {
				found[path] = append(found[path], fmt.Sprint(m))
			}
			slices.Sort(found[path])
		}
	}
	return found
}
