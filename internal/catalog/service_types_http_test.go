package catalog_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

type serviceTypeView struct {
	ID                string           `json:"id"`
	Path              string           `json:"path"`
	Schema            json.RawMessage  `json:"schema"`
	Lifecycle         string           `json:"lifecycle"`
	IdentityAttribute *string          `json:"identity_attribute"`
	ParentServiceType *string          `json:"parent_service_type"`
	OnParentDelete    string           `json:"on_parent_delete"`
	RequiredAdapters  []string         `json:"required_adapters"`
	Runtime           *json.RawMessage `json:"runtime"`
}

type serviceTypePage struct {
	Results       []serviceTypeView `json:"results"`
	NextPageToken string            `json:"next_page_token"`
}

func TestServiceTypes_ListPagesByID(t *testing.T) {
	t.Parallel()
	e := setup(t, store.SQLite) // service types are not stored: one engine suffices
	var all serviceTypePage
	e.do(t, "GET", "/api/v1/service-types", nil).want(t, http.StatusOK, &all)
	var ids []string
	for _, st := range all.Results {
		ids = append(ids, st.ID)
	}
	if got := len(ids); got != 6 || ids[0] != "cluster" || ids[5] != "vm" || all.NextPageToken != "" {
		t.Fatalf("list = %v, token %q; want the six built-ins by id and no next page", ids, all.NextPageToken)
	}

	var first, second serviceTypePage
	e.do(t, "GET", "/api/v1/service-types?max_page_size=3", nil).want(t, http.StatusOK, &first)
	if len(first.Results) != 3 || first.NextPageToken == "" {
		t.Fatalf("first page: %d results, token %q; want 3 and a token", len(first.Results), first.NextPageToken)
	}
	e.do(t, "GET", "/api/v1/service-types?max_page_size=3&page_token="+first.NextPageToken, nil).want(t, http.StatusOK, &second)
	if len(second.Results) != 3 || second.Results[0].ID != "database" || second.Results[2].ID != "vm" || second.NextPageToken != "" {
		t.Fatalf("second page = %+v, want database, postgres-database and vm and no token", second)
	}

	e.do(t, "GET", "/api/v1/service-types?page_token=nope", nil).wantProblem(t, http.StatusBadRequest, "INVALID_PAGE_TOKEN")
	e.do(t, "GET", "/api/v1/service-types?max_page_size=-1", nil).wantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
}

func TestServiceTypes_Get(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		var vm serviceTypeView
		r := e.do(t, "GET", "/api/v1/service-types/vm", nil).want(t, http.StatusOK, &vm)
		var members map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &members); err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"id", "path", "schema", "lifecycle", "identity_attribute", "parent_service_type",
			"on_parent_delete", "required_adapters", "runtime"} {
			if _, ok := members[m]; !ok {
				t.Errorf("service type has no %q member: %s", m, r.body)
			}
		}
		if vm.ID != "vm" || vm.Path != "service-types/vm" || vm.Lifecycle != "simple" || vm.OnParentDelete != "cascade" ||
			vm.RequiredAdapters == nil || vm.IdentityAttribute != nil || vm.Runtime != nil || !json.Valid(vm.Schema) {
			t.Errorf("GET vm = %s", r.body)
		}

		p := e.do(t, "GET", "/api/v1/service-types/storage", nil).wantProblem(t, http.StatusNotFound, "SERVICE_TYPE_NOT_FOUND")
		if p.Detail == "" {
			t.Errorf("problem has no detail: %+v", p)
		}
	})
}
