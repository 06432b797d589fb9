package catalog_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/catalog"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestCatalogItem_CreateGetList(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		var created, got itemView
		r := e.do(t, "POST", "/api/v1/catalog-items?id=small-fedora-vm", smallVM()).want(t, http.StatusCreated, &created)
		if loc := r.header.Get("Location"); loc != "/api/v1/catalog-items/small-fedora-vm" {
			t.Errorf("Location = %q", loc)
		}
		if r.header.Get("ETag") == "" || r.header.Get("ETag") != created.ETag {
			t.Errorf("ETag header %q, body etag %q: want both, equal", r.header.Get("ETag"), created.ETag)
		}
		if created.ID != "small-fedora-vm" || created.Path != "catalog-items/small-fedora-vm" || created.DisplayName != "Small Fedora VM" ||
			created.ServiceType != "vm" || created.CreateTime == "" || created.CreateTime != created.UpdateTime {
			t.Errorf("created = %+v", created)
		}
		wantFields := []map[string]any{
			{"path": "vcpu.count", "display_name": "vCPUs", "editable": true, "default": 2.0, "validation_schema": map[string]any{"maximum": 4.0}},
			{"path": "metadata.name", "editable": true},
		}
		if diff := cmp.Diff(wantFields, created.Fields); diff != "" {
			t.Errorf("fields: -want +got:\n%s", diff)
		}

		e.do(t, "GET", "/api/v1/catalog-items/small-fedora-vm", nil).want(t, http.StatusOK, &got)
		if diff := cmp.Diff(created, got); diff != "" {
			t.Errorf("GET differs from the create's answer: -create +get:\n%s", diff)
		}
		e.do(t, "GET", "/api/v1/catalog-items/nope", nil).wantProblem(t, http.StatusNotFound, "CATALOG_ITEM_NOT_FOUND")
		e.do(t, "POST", "/api/v1/catalog-items?id=small-fedora-vm", smallVM()).wantProblem(t, http.StatusConflict, "CATALOG_ITEM_EXISTS")
		p := e.do(t, "POST", "/api/v1/catalog-items?id=Bad_Id", smallVM()).wantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if len(p.Fields) != 1 || p.Fields[0].Field != "id" {
			t.Errorf("bad id: fields %+v, want id", p.Fields)
		}

		var generated itemView
		e.do(t, "POST", "/api/v1/catalog-items", map[string]any{"service_type": "container"}).want(t, http.StatusCreated, &generated)
		if !uuidPattern.MatchString(generated.ID) || generated.DisplayName != generated.ID ||
			generated.Defaults == nil || generated.Fields == nil {
			t.Errorf("item without id = %+v; want a UUID, the id as display name, {} defaults and [] fields", generated)
		}
		for i := range 3 {
			e.do(t, "POST", fmt.Sprintf("/api/v1/catalog-items?id=db-%d", i), map[string]any{"service_type": "database"}).
				want(t, http.StatusCreated, nil)
		}

		var dbs, page1, page2 itemPage
		e.do(t, "GET", "/api/v1/catalog-items?service_type=database", nil).want(t, http.StatusOK, &dbs)
		if len(dbs.Results) != 3 || dbs.NextPageToken != "" {
			t.Errorf("service_type=database: %d results, token %q; want 3, none", len(dbs.Results), dbs.NextPageToken)
		}
		for _, it := range dbs.Results {
			if it.ServiceType != "database" || it.ETag == "" || it.Path != "catalog-items/"+it.ID {
				t.Errorf("filtered list holds %+v", it)
			}
		}
		e.do(t, "GET", "/api/v1/catalog-items?max_page_size=3", nil).want(t, http.StatusOK, &page1)
		e.do(t, "GET", "/api/v1/catalog-items?max_page_size=3&page_token="+page1.NextPageToken, nil).want(t, http.StatusOK, &page2)
		seen := map[string]bool{}
		for _, it := range append(page1.Results, page2.Results...) {
			seen[it.ID] = true
		}
		if len(page1.Results) != 3 || page1.NextPageToken == "" || len(page2.Results) != 2 || page2.NextPageToken != "" || len(seen) != 5 {
			t.Errorf("pages: %d (token %q) then %d (token %q), %d distinct; want 3 then 2, all 5",
				len(page1.Results), page1.NextPageToken, len(page2.Results), page2.NextPageToken, len(seen))
		}
		e.do(t, "GET", "/api/v1/catalog-items?page_token=nope", nil).wantProblem(t, http.StatusBadRequest, "INVALID_PAGE_TOKEN")
	})
}

func TestCatalogItem_CreateRefusesBadItems(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		cases := map[string]struct {
			reason string
			body   string
			want   []string // the fields named
		}{
			"UnknownServiceType": {reason: "An unknown service type is the body's fault.",
				body: `{"service_type": "storage"}`, want: []string{"service_type"}},
			"BadFields": {reason: "Each field is named by its index.", body: `{"service_type": "vm", "fields": [
				{"path": "vcpu.count", "editable": true}, {"path": "vcpu..count"}, {"path": "vcpu.count"},
				{"path": "memory.size", "validation_schema": {"type": "string"}},
				{"path": "guest_os.type", "editable": true, "validation_schema": {"minLength": "x"}},
				{"path": "metadata.name", "editable": true, "default": "Web", "validation_schema": {"pattern": "^[a-z]+$"}}]}`,
				want: []string{"fields[1].path", "fields[2].path", "fields[3].validation_schema",
					"fields[4].validation_schema.minLength", "fields[5].default"}},
			"BadDefaults": {reason: "The resolved defaults satisfy the type's schema where they say something.",
				body: `{"service_type": "vm", "defaults": {"vcpu": {"count": "two"}}}`, want: []string{"defaults.vcpu.count"}},
			"WrongJSONType": {reason: "A member of the wrong JSON type is named.",
				body: `{"service_type": "vm", "fields": {"path": "x"}}`, want: []string{"fields"}},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				p := e.do(t, "POST", "/api/v1/catalog-items", tc.body).wantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
				var got []string
				for _, f := range p.Fields {
					got = append(got, f.Field)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s\nfields named: -want +got:\n%s\nbody: %+v", tc.reason, diff, p)
				}
			})
		}
		var none itemPage
		e.do(t, "GET", "/api/v1/catalog-items", nil).want(t, http.StatusOK, &none)
		if len(none.Results) != 0 {
			t.Errorf("refused creates stored %d items", len(none.Results))
		}
	})
}

func TestCatalogItem_PatchIsAMergePatchAndHonoursIfMatch(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		var v1, v2 itemView
		e.do(t, "POST", "/api/v1/catalog-items?id=small-fedora-vm", smallVM()).want(t, http.StatusCreated, &v1)

		r := e.do(t, "PATCH", "/api/v1/catalog-items/small-fedora-vm",
			`{"display_name": "Small VM", "defaults": {"guest_os": null, "memory": {"size": "4GB"}}}`,
			"If-Match", v1.ETag, "Content-Type", "application/merge-patch+json").want(t, http.StatusOK, &v2)
		if v2.ETag == v1.ETag || r.header.Get("ETag") != v2.ETag || v2.DisplayName != "Small VM" || v2.CreateTime != v1.CreateTime {
			t.Errorf("patched = %+v (was %+v); want a new etag, the new name, the same create_time", v2, v1)
		}
		if diff := cmp.Diff(map[string]any{"memory": map[string]any{"size": "4GB"}}, v2.Defaults); diff != "" {
			t.Errorf("merged defaults: -want +got:\n%s", diff)
		}
		if len(v2.Fields) != 2 {
			t.Errorf("fields absent from the patch changed: %+v", v2.Fields)
		}

		e.do(t, "PATCH", "/api/v1/catalog-items/small-fedora-vm", `{"display_name": "Stale"}`, "If-Match", v1.ETag).
			wantProblem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
		p := e.do(t, "PATCH", "/api/v1/catalog-items/small-fedora-vm", `{"service_type": "container"}`).
			wantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if len(p.Fields) != 1 || p.Fields[0].Field != "service_type" {
			t.Errorf("service_type change: fields %+v", p.Fields)
		}
		p = e.do(t, "PATCH", "/api/v1/catalog-items/small-fedora-vm",
			`{"fields": [{"path": "vcpu.count", "editable": true, "default": 8, "validation_schema": {"maximum": 4}}]}`).
			wantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if diff := cmp.Diff([]invalid.Field{{Field: "fields[0].default", Message: "must be at most 4"}}, p.Fields); diff != "" {
			t.Errorf("patched fields are checked: -want +got:\n%s", diff)
		}
		e.do(t, "PATCH", "/api/v1/catalog-items/nope", `{}`).wantProblem(t, http.StatusNotFound, "CATALOG_ITEM_NOT_FOUND")

		var v3 itemView
		e.do(t, "GET", "/api/v1/catalog-items/small-fedora-vm", nil).want(t, http.StatusOK, &v3)
		if v3.ETag != v2.ETag || v3.DisplayName != "Small VM" {
			t.Errorf("refused patches changed the item: %+v", v3)
		}
	})
}

func TestCatalogItem_DeleteRefusedWhileOrdersLive(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		var it itemView
		e.do(t, "POST", "/api/v1/catalog-items?id=small-fedora-vm", smallVM()).want(t, http.StatusCreated, &it)

		e.setOrders(t, "small-fedora-vm", 2)
		p := e.do(t, "DELETE", "/api/v1/catalog-items/small-fedora-vm", nil).wantProblem(t, http.StatusConflict, "CATALOG_ITEM_IN_USE")
		if p.Extra["live_orders"] != 2.0 || p.Extra["catalog_item_id"] != "small-fedora-vm" {
			t.Errorf("in-use problem = %s; want live_orders 2 (the removed one not counted) and the item's id", p.Extra)
		}
		e.do(t, "GET", "/api/v1/catalog-items/small-fedora-vm", nil).want(t, http.StatusOK, nil)

		e.setOrders(t, "small-fedora-vm", 0)
		e.do(t, "DELETE", "/api/v1/catalog-items/small-fedora-vm", nil, "If-Match", `"99"`).
			wantProblem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
		e.do(t, "DELETE", "/api/v1/catalog-items/small-fedora-vm", nil, "If-Match", it.ETag).want(t, http.StatusNoContent, nil)
		e.do(t, "GET", "/api/v1/catalog-items/small-fedora-vm", nil).wantProblem(t, http.StatusNotFound, "CATALOG_ITEM_NOT_FOUND")
		e.do(t, "DELETE", "/api/v1/catalog-items/small-fedora-vm", nil).wantProblem(t, http.StatusNotFound, "CATALOG_ITEM_NOT_FOUND")
	})
}

// The order flow's use: read the stored item, build the spec (DCM: a value
// over the field's maximum is refused).
func TestBuildSpec_FromStoredItem(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.do(t, "POST", "/api/v1/catalog-items?id=small-fedora-vm", smallVM()).want(t, http.StatusCreated, nil)
		it, err := e.svc.Item(context.Background(), "small-fedora-vm")
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.svc.BuildSpec(t.Context(), it, []catalog.UserValue{{Path: "metadata.name", Value: "web-1"}, {Path: "vcpu.count", Value: 9.0}})
		if diff := cmp.Diff(&invalid.Error{Fields: []invalid.Field{{Field: "user_values[1].value", Message: "must be at most 4",
			Path: "vcpu.count", DisplayName: "vCPUs"}}}, err); diff != "" {
			t.Errorf("BuildSpec(vcpu.count 9): -want +got:\n%s", diff)
		}
		got, err := e.svc.BuildSpec(t.Context(), it, []catalog.UserValue{{Path: "metadata.name", Value: "web-1"}, {Path: "vcpu.count", Value: 4.0}})
		if err != nil {
			t.Fatalf("BuildSpec(vcpu.count 4): %v", err)
		}
		want := map[string]any{"service_type": "vm", "vcpu": map[string]any{"count": 4.0}, "memory": map[string]any{"size": "2GB"},
			"guest_os": map[string]any{"type": "fedora-39"}, "metadata": map[string]any{"name": "web-1"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("BuildSpec: -want +got:\n%s", diff)
		}
	})
}
