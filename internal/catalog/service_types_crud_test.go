package catalog_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// cacheType is a user-defined service type: an engine set once, a size
// that may change, an endpoint the provider fills in.
func cacheType() map[string]any {
	return map[string]any{
		"schema": map[string]any{
			"type":     "object",
			"required": []any{"name", "engine", "size"},
			"properties": map[string]any{
				"name":     map[string]any{"type": "string"},
				"engine":   map[string]any{"type": "string", "enum": []any{"redis", "memcached"}},
				"size":     map[string]any{"type": "string", "enum": []any{"small", "large"}, "x-modifier": "rw+"},
				"endpoint": map[string]any{"type": "string", "x-modifier": "r"},
			},
		},
		"identity_attribute": "name",
		"required_adapters":  []any{"dns"},
	}
}

type storedServiceType struct {
	ID                string   `json:"id"`
	Path              string   `json:"path"`
	Lifecycle         string   `json:"lifecycle"`
	IdentityAttribute *string  `json:"identity_attribute"`
	ParentServiceType *string  `json:"parent_service_type"`
	OnParentDelete    string   `json:"on_parent_delete"`
	RequiredAdapters  []string `json:"required_adapters"`
	Builtin           bool     `json:"builtin"`
	ETag              string   `json:"etag"`
	CreateTime        string   `json:"create_time"`
}

func TestServiceTypes_CreateGetListReplaceDelete(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		var created storedServiceType
		r := s.Do(t, "POST", "/api/v1/service-types?id=cache", cacheType()).Want(t, http.StatusCreated)
		r.JSON(t, &created)
		if loc := r.Header.Get("Location"); loc != "/api/v1/service-types/cache" {
			t.Errorf("Location = %q", loc)
		}
		if created.ID != "cache" || created.Path != "service-types/cache" || created.Lifecycle != "simple" ||
			created.OnParentDelete != "cascade" || created.Builtin || created.IdentityAttribute == nil ||
			*created.IdentityAttribute != "name" || !slices.Equal(created.RequiredAdapters, []string{"dns"}) ||
			created.ETag == "" || r.Header.Get("ETag") != created.ETag || created.CreateTime == "" {
			t.Fatalf("created = %s", r.Body)
		}

		var page struct {
			Results []storedServiceType `json:"results"`
		}
		s.Do(t, "GET", "/api/v1/service-types", nil).Want(t, http.StatusOK).JSON(t, &page)
		var ids []string
		for _, st := range page.Results {
			ids = append(ids, st.ID)
			if st.Builtin != (st.ID != "cache") {
				t.Errorf("%s: builtin = %v", st.ID, st.Builtin)
			}
		}
		if !slices.Equal(ids, []string{"cache", "cluster", "container", "container-app", "database", "postgres-database", "vm"}) {
			t.Errorf("list = %v, want the stored type among the built-ins, by id", ids)
		}
		var second struct {
			Results       []storedServiceType `json:"results"`
			NextPageToken string              `json:"next_page_token"`
		}
		s.Do(t, "GET", "/api/v1/service-types?max_page_size=1", nil).Want(t, http.StatusOK).JSON(t, &second)
		s.Do(t, "GET", "/api/v1/service-types?max_page_size=1&page_token="+second.NextPageToken, nil).
			Want(t, http.StatusOK).JSON(t, &second)
		if len(second.Results) != 1 || second.Results[0].ID != "cluster" {
			t.Errorf("second page of one = %+v, want cluster", second.Results)
		}

		// PUT replaces; a stale If-Match is refused.
		next := cacheType()
		next["on_parent_delete"] = "restrict"
		var replaced storedServiceType
		s.Do(t, "PUT", "/api/v1/service-types/cache", next, "If-Match", created.ETag).Want(t, http.StatusOK).JSON(t, &replaced)
		if replaced.OnParentDelete != "restrict" || replaced.ETag == created.ETag {
			t.Errorf("replaced = %+v", replaced)
		}
		s.Do(t, "PUT", "/api/v1/service-types/cache", next, "If-Match", created.ETag).
			WantProblem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
		s.Do(t, "PUT", "/api/v1/service-types/nope", next).WantProblem(t, http.StatusNotFound, "SERVICE_TYPE_NOT_FOUND")

		// It survives a restart.
		s = s.Restart(t)
		var got storedServiceType
		s.Do(t, "GET", "/api/v1/service-types/cache", nil).Want(t, http.StatusOK).JSON(t, &got)
		if got.OnParentDelete != "restrict" || got.ETag != replaced.ETag {
			t.Errorf("after restart = %+v", got)
		}

		s.Do(t, "DELETE", "/api/v1/service-types/cache", nil, "If-Match", created.ETag).
			WantProblem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
		s.Do(t, "DELETE", "/api/v1/service-types/cache", nil, "If-Match", got.ETag).Want(t, http.StatusNoContent)
		s.Do(t, "GET", "/api/v1/service-types/cache", nil).WantProblem(t, http.StatusNotFound, "SERVICE_TYPE_NOT_FOUND")
	})
}

func TestServiceTypes_Refusals(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		with := func(change func(m map[string]any)) map[string]any {
			m := cacheType()
			change(m)
			return m
		}
		schemaWith := func(change func(m map[string]any)) map[string]any {
			return with(func(m map[string]any) { change(m["schema"].(map[string]any)) })
		}
		props := func(m map[string]any) map[string]any { return m["properties"].(map[string]any) }
		cases := map[string]struct {
			body      map[string]any
			wantField string
		}{
			"SchemaNotASchema":    {schemaWith(func(m map[string]any) { m["minProperties"] = "two" }), "schema.minProperties"},
			"SchemaRootNotObject": {schemaWith(func(m map[string]any) { m["type"] = "array" }), "schema.type"},
			"SchemaOtherDialect": {schemaWith(func(m map[string]any) {
				m["$schema"] = "http://json-schema.org/draft-07/schema#"
			}), "schema.$schema"},
			"SchemaExternalRef": {schemaWith(func(m map[string]any) {
				props(m)["x"] = map[string]any{"$ref": "https://example.com/x.json"}
			}), "schema"},
			"BadModifier": {schemaWith(func(m map[string]any) {
				props(m)["size"].(map[string]any)["x-modifier"] = "w"
			}), "schema.properties.size.x-modifier"},
			"UnknownLifecycle":       {with(func(m map[string]any) { m["lifecycle"] = "nope" }), "lifecycle"},
			"UnknownParent":          {with(func(m map[string]any) { m["parent_service_type"] = "nope" }), "parent_service_type"},
			"SelfParent":             {with(func(m map[string]any) { m["parent_service_type"] = "cache" }), "parent_service_type"},
			"IdentityNotAProperty":   {with(func(m map[string]any) { m["identity_attribute"] = "nope" }), "identity_attribute"},
			"IdentityUpdatable":      {with(func(m map[string]any) { m["identity_attribute"] = "size" }), "identity_attribute"},
			"IdentityServerAssigned": {with(func(m map[string]any) { m["identity_attribute"] = "endpoint" }), "identity_attribute"},
			"IdentityNotRequired": {schemaWith(func(m map[string]any) {
				m["required"] = []any{"engine", "size"}
			}), "identity_attribute"},
			"BadOnParentDelete": {with(func(m map[string]any) { m["on_parent_delete"] = "orphan" }), "on_parent_delete"},
			"BadAdapterName":    {with(func(m map[string]any) { m["required_adapters"] = []any{"DNS!"} }), "required_adapters[0]"},
			"DuplicateAdapter":  {with(func(m map[string]any) { m["required_adapters"] = []any{"dns", "dns"} }), "required_adapters[1]"},
			"BadRuntimeKind":    {with(func(m map[string]any) { m["runtime"] = map[string]any{"kind": "vm"} }), "runtime.kind"},
			"NoSchema":          {with(func(m map[string]any) { delete(m, "schema") }), "schema"},
		}
		for name, tc := range cases {
			p := s.Do(t, "POST", "/api/v1/service-types?id=cache", tc.body).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
			var fields []string
			for _, f := range p.Fields {
				fields = append(fields, f["field"].(string))
			}
			if !slices.Contains(fields, tc.wantField) {
				t.Errorf("%s: fields %v, want %s named", name, fields, tc.wantField)
			}
		}
		s.Do(t, "GET", "/api/v1/service-types/cache", nil).WantProblem(t, http.StatusNotFound, "SERVICE_TYPE_NOT_FOUND")

		// Ids: taken, built in, malformed.
		s.Do(t, "POST", "/api/v1/service-types?id=cache", cacheType()).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/service-types?id=cache", cacheType()).WantProblem(t, http.StatusConflict, "SERVICE_TYPE_EXISTS")
		s.Do(t, "POST", "/api/v1/service-types?id=vm", cacheType()).WantProblem(t, http.StatusConflict, "SERVICE_TYPE_EXISTS")
		s.Do(t, "POST", "/api/v1/service-types?id=Bad_Id", cacheType()).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")

		// The built-ins are read-only.
		s.Do(t, "PUT", "/api/v1/service-types/vm", cacheType()).WantProblem(t, http.StatusConflict, "SERVICE_TYPE_READ_ONLY")
		s.Do(t, "DELETE", "/api/v1/service-types/vm", nil).WantProblem(t, http.StatusConflict, "SERVICE_TYPE_READ_ONLY")

		// Parents: a chain is fine, a cycle is not, a parent in use stays.
		child := cacheType()
		child["parent_service_type"] = "cache"
		s.Do(t, "POST", "/api/v1/service-types?id=cache-replica", child).Want(t, http.StatusCreated)
		cycle := cacheType()
		cycle["parent_service_type"] = "cache-replica"
		p := s.Do(t, "PUT", "/api/v1/service-types/cache", cycle).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if len(p.Fields) != 1 || p.Fields[0]["field"] != "parent_service_type" {
			t.Errorf("cycle: %+v", p)
		}
		p = s.Do(t, "DELETE", "/api/v1/service-types/cache", nil).WantProblem(t, http.StatusConflict, "SERVICE_TYPE_IN_USE")
		if p.Detail == "" {
			t.Errorf("in use: %+v", p)
		}
	})
}

func TestServiceTypes_OrdersOfAUserDefinedType(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		s.Do(t, "POST", "/api/v1/service-types?id=cache", cacheType()).Want(t, http.StatusCreated)
		p := providertest.New(t)
		s.Do(t, "POST", "/api/v1/providers", p.Registration("cache-sp", "cache")).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/catalog-items?id=small-redis", map[string]any{
			"service_type": "cache",
			"defaults":     map[string]any{"engine": "redis", "size": "small"},
			"fields":       []any{map[string]any{"path": "name", "editable": true}},
		}).Want(t, http.StatusCreated)
		// The item's values are checked against the stored schema.
		s.Do(t, "POST", "/api/v1/catalog-items?id=bad", map[string]any{
			"service_type": "cache", "defaults": map[string]any{"engine": "mysql"},
		}).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")

		var o struct {
			ID          string `json:"id"`
			ServiceType string `json:"service_type"`
			InstanceID  string `json:"instance_id"`
			State       string `json:"state"`
		}
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=c1", map[string]any{
			"catalog_item_id": "small-redis", "user_values": []any{map[string]any{"path": "name", "value": "c1"}},
		}).Want(t, http.StatusCreated).JSON(t, &o)
		if o.ServiceType != "cache" {
			t.Fatalf("order = %+v", o)
		}
		call := p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
		if call.ServiceType != "cache" || call.Spec["engine"] != "redis" || call.Spec["service_type"] != "cache" {
			t.Errorf("provider got %+v", call)
		}
		s.Do(t, "PUT", "/api/v1/service-type-instances/"+o.InstanceID+"/status", map[string]any{
			"status": "RUNNING", "observed_time": time.Now().UTC().Format(time.RFC3339Nano),
		}).Want(t, http.StatusOK)
		poll.Until(t, "order c1 up", func() bool {
			s.Do(t, "GET", "/api/v1/catalog-item-instances/c1", nil).Want(t, http.StatusOK).JSON(t, &o)
			return o.State == "up"
		})

		// A schema the live order's attributes break is refused, naming how
		// many; one they satisfy is taken.
		breaking := cacheType()
		breaking["schema"].(map[string]any)["properties"].(map[string]any)["engine"] =
			map[string]any{"type": "string", "enum": []any{"memcached"}}
		prob := s.Do(t, "PUT", "/api/v1/service-types/cache", breaking).WantProblem(t, http.StatusConflict, "SERVICE_TYPE_IN_USE")
		var detail struct {
			BrokenOrders int      `json:"broken_orders"`
			Examples     []string `json:"broken_order_examples"`
		}
		s.Do(t, "PUT", "/api/v1/service-types/cache", breaking).JSON(t, &detail)
		if detail.BrokenOrders != 1 || !slices.Equal(detail.Examples, []string{"c1"}) || prob.Detail == "" {
			t.Errorf("breaking PUT: %+v, %+v", prob, detail)
		}
		relaxed := cacheType()
		relaxed["schema"].(map[string]any)["properties"].(map[string]any)["engine"] =
			map[string]any{"type": "string", "enum": []any{"redis", "memcached", "valkey"}}
		s.Do(t, "PUT", "/api/v1/service-types/cache", relaxed).Want(t, http.StatusOK)
		// The lifecycle of a type with live orders does not change.
		otherLifecycle := cacheType()
		otherLifecycle["lifecycle"] = "service"
		s.Do(t, "PUT", "/api/v1/service-types/cache", otherLifecycle).WantProblem(t, http.StatusConflict, "SERVICE_TYPE_IN_USE")

		// Delete waits for the item and the live order to go.
		s.Do(t, "DELETE", "/api/v1/service-types/cache", nil).WantProblem(t, http.StatusConflict, "SERVICE_TYPE_IN_USE")
		var deleting struct {
			Generation int64 `json:"generation"`
		}
		s.Do(t, "DELETE", "/api/v1/catalog-item-instances/c1", nil).Want(t, http.StatusAccepted).JSON(t, &deleting)
		// The type requires the dns adapter: the order is removed once it
		// confirms its cleanup.
		s.Do(t, "PUT", "/api/v1/catalog-item-instances/c1/adapter-statuses/dns", map[string]any{
			"observed_generation": deleting.Generation, "observed_time": time.Now().UTC().Format(time.RFC3339Nano),
			"conditions": []any{map[string]any{"type": "Applied", "status": "False"},
				map[string]any{"type": "Available", "status": "False"}, map[string]any{"type": "Health", "status": "True"}},
		}).Want(t, http.StatusOK)
		poll.Until(t, "order c1 terminated", func() bool {
			s.Do(t, "GET", "/api/v1/catalog-item-instances/c1?show_deleted=true", nil).Want(t, http.StatusOK).JSON(t, &o)
			return o.State == "terminated"
		})
		s.Do(t, "DELETE", "/api/v1/service-types/cache", nil).WantProblem(t, http.StatusConflict, "SERVICE_TYPE_IN_USE")
		s.Do(t, "DELETE", "/api/v1/catalog-items/small-redis", nil).Want(t, http.StatusNoContent)
		s.Do(t, "DELETE", "/api/v1/service-types/cache", nil).Want(t, http.StatusNoContent)
	})
}

func TestServiceTypes_OpenAPIPerType(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite) // generated from the stored type; one engine suffices
	s.Do(t, "POST", "/api/v1/service-types?id=cache-replica", cacheType()).Want(t, http.StatusCreated)
	var doc struct {
		OpenAPI    string                    `json:"openapi"`
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	s.Do(t, "GET", "/api/v1/service-types/cache-replica/openapi.json", nil).Want(t, http.StatusOK).JSON(t, &doc)
	attrs := doc.Components.Schemas["CacheReplicaAttributes"]
	props, _ := attrs["properties"].(map[string]any)
	size, _ := props["size"].(map[string]any)
	if doc.OpenAPI != "3.1.0" || size["x-modifier"] != "rw+" || attrs["$id"] == nil ||
		doc.Paths["/api/v1/catalog-item-instances/{id}"]["patch"] == nil || doc.Components.Schemas["CacheReplicaOrder"] == nil {
		t.Errorf("document = %+v", doc)
	}
	// The order bodies are closed, as the API's (issue 13).
	for _, schema := range []string{"CacheReplicaCreate", "CacheReplicaUpdate"} {
		if got := doc.Components.Schemas[schema]["additionalProperties"]; got != false {
			t.Errorf("%s: additionalProperties = %v, want false", schema, got)
		}
	}
	s.Do(t, "GET", "/api/v1/service-types/vm/openapi.json", nil).Want(t, http.StatusOK)
	s.Do(t, "GET", "/api/v1/service-types/nope/openapi.json", nil).WantProblem(t, http.StatusNotFound, "SERVICE_TYPE_NOT_FOUND")
}
