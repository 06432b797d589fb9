package server_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/stewardhq/steward/api"
	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// documentedOperation is an operation of api/openapi.yaml with the query
// parameters it declares.
type documentedOperation struct {
	method, path string
	query        []string
}

// openAPIDocument loads api/openapi.yaml.
func openAPIDocument(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPIYAML)
	if err != nil {
		t.Fatalf("load api/openapi.yaml: %v", err)
	}
	return doc
}

// documentedOperations lists every operation of api/openapi.yaml.
func documentedOperations(t *testing.T) []documentedOperation {
	t.Helper()
	doc := openAPIDocument(t)
	var ops []documentedOperation
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			query := []string{}
			for _, p := range slices.Concat(item.Parameters, op.Parameters) {
				if p.Value.In == openapi3.ParameterInQuery {
					query = append(query, p.Value.Name)
				}
			}
			ops = append(ops, documentedOperation{method, path, query})
		}
	}
	if len(ops) < 60 {
		t.Fatalf("found %d operations; the document has more", len(ops))
	}
	return ops
}

// Issue 22, item 5: `?stat=up` (a typo of state) listed every order. Every
// route refuses a query parameter it does not declare with 400
// INVALID_ARGUMENT naming it and listing the ones it takes, and refuses
// none of those it declares.
func TestQuery_UnknownParameterRefusedOnEveryRoute(t *testing.T) {
	t.Parallel()
	ops := documentedOperations(t)
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		for _, op := range ops {
			t.Run(op.method+" "+strings.TrimPrefix(op.path, "/"), func(t *testing.T) {
				t.Parallel()
				target := fill(op.path)
				p := s.Do(t, op.method, target+"?stat=up", nil).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
				if p.Extra["parameter"] != "stat" || len(fieldsNamed(p, "stat")) != 1 {
					t.Errorf("problem %+v does not name the parameter stat", p)
				}
				var accepted []string
				for _, a := range p.Extra["accepted"].([]any) {
					accepted = append(accepted, a.(string))
				}
				if !slices.Equal(accepted, op.query) && (len(accepted) != 0 || len(op.query) != 0) {
					t.Errorf("accepted = %q, want the document's %q", accepted, op.query)
				}
				if !strings.Contains(p.Detail, `"stat"`) || !strings.Contains(p.Detail, strings.Join(op.query, ", ")) {
					t.Errorf("detail %q does not name stat and list %q", p.Detail, op.query)
				}

				// Every declared parameter passes this check (its value may
				// still be refused for what it is).
				if len(op.query) == 0 {
					return
				}
				q := url.Values{}
				for _, name := range op.query {
					q.Set(name, "1")
				}
				resp := s.Do(t, op.method, target+"?"+q.Encode(), nil)
				if strings.Contains(string(resp.Body), `"parameter"`) {
					t.Errorf("%s %s?%s refused a declared parameter: %s", op.method, target, q.Encode(), resp.Body)
				}
			})
		}
	})
}

// Issue 22, item 5: the CLI's `--filter bogus=1` and a typo in a list's
// filter are refused, and the real filter still works.
func TestQuery_MisspelledFilterRefused(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		p := s.Do(t, "GET", "/api/v1/catalog-item-instances?stat=up&bogus=1", nil).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if p.Extra["parameter"] != "bogus" || len(fieldsNamed(p, "bogus")) != 1 || len(fieldsNamed(p, "stat")) != 1 {
			t.Errorf("problem %+v does not name both bogus and stat", p)
		}
		if !slices.Contains(p.Extra["accepted"].([]any), any("state")) {
			t.Errorf("accepted = %v, want state among them", p.Extra["accepted"])
		}
		s.Do(t, "GET", "/api/v1/catalog-item-instances?state=up&label=env:prod&show_deleted=true&max_page_size=5", nil).
			Want(t, http.StatusOK)
		// labels.<key>=<value> is the other form of label, where label is taken.
		s.Do(t, "GET", "/api/v1/catalog-item-instances?labels.env=prod", nil).Want(t, http.StatusOK)
		s.Do(t, "GET", "/api/v1/catalog-item-instances?labels.=prod", nil).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		s.Do(t, "GET", "/api/v1/providers?labels.env=prod", nil).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		s.Do(t, "GET", "/api/v1/health?verbose=1", nil).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
	})
}
