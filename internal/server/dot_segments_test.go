package server_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

var pathParamName = regexp.MustCompile(`\{([a-z_]+)\}`)

// Issue 22, item 6: ServeMux cleans a path with a . or .. segment by
// redirecting (GET /api/v1/service-types/../openapi.json answered 307 to
// /api/v1/openapi.json). Every route answers . and .., raw or
// percent-encoded, in place of each of its ids with 400 INVALID_ARGUMENT
// naming that id, never a redirect.
func TestPath_DotSegmentsAreNotIDs(t *testing.T) {
	t.Parallel()
	ops := documentedOperations(t)
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		// A redirect must be seen, not followed.
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		do := func(t *testing.T, method, path string) *apitest.Response {
			t.Helper()
			req, err := http.NewRequest(method, s.URL()+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("read %s %s: %v", method, path, err)
			}
			return &apitest.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
		}
		checked := 0
		for _, op := range ops {
			params := pathParamName.FindAllStringSubmatchIndex(op.path, -1)
			for _, m := range params {
				name := op.path[m[2]:m[3]]
				for _, dot := range []string{".", "..", "%2e", "%2E%2e"} {
					path := fill(op.path[:m[0]] + dot + op.path[m[1]:])
					checked++
					r := do(t, op.method, path)
					if loc := r.Header.Get("Location"); r.Status/100 == 3 || loc != "" {
						t.Errorf("%s %s: %d to %q, want no redirect", op.method, path, r.Status, loc)
						continue
					}
					p := r.WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
					if msgs := fieldsNamed(p, name); len(msgs) != 1 || !strings.Contains(msgs[0], "is not a valid id") {
						t.Errorf("%s %s: fields %v, want %s: … is not a valid id", op.method, path, p.Fields, name)
					}
				}
			}
		}
		if checked < 200 {
			t.Fatalf("checked %d requests; the document has more ids", checked)
		}
		for _, path := range []string{"/api/v1/service-types/../openapi.json", "/api/v1/../v1/health", "/api/v1/catalog-item-instances/./x"} {
			r := do(t, "GET", path)
			if r.Status != http.StatusBadRequest || r.Header.Get("Location") != "" {
				t.Errorf("GET %s: %d (Location %q), want 400", path, r.Status, r.Header.Get("Location"))
			}
			r.WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		}
	})
}
