package server_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// openAPIGet is what the test reads of a path in the served document.
type openAPIGet struct {
	// lists is true when the GET takes max_page_size (API.md, Conventions:
	// every list does, by $ref to the shared parameter).
	lists bool
}

// openAPIGets returns the GET operations of the served OpenAPI document,
// keyed by path template.
func openAPIGets(t *testing.T, s *apitest.Server) map[string]openAPIGet {
	t.Helper()
	type param struct {
		Ref  string `json:"$ref"`
		Name string `json:"name"`
	}
	var doc struct {
		Paths map[string]struct {
			Parameters []param `json:"parameters"`
			Get        *struct {
				Parameters []param `json:"parameters"`
			} `json:"get"`
		} `json:"paths"`
	}
	s.Do(t, "GET", "/api/v1/openapi.json", nil).Want(t, http.StatusOK).JSON(t, &doc)
	gets := map[string]openAPIGet{}
	for path, item := range doc.Paths {
		if item.Get == nil {
			continue
		}
		lists := slices.ContainsFunc(slices.Concat(item.Parameters, item.Get.Parameters), func(p param) bool {
			return p.Name == "max_page_size" || strings.HasSuffix(p.Ref, "/parameters/max_page_size")
		})
		gets[path] = openAPIGet{lists: lists}
	}
	return gets
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// Issue 8, section 3: a query whose percent-escape does not decode was
// dropped by r.URL.Query(), so every list answered 200 with the default page
// size. Every GET the document serves, lists first among them, must refuse it
// with 400 INVALID_ARGUMENT naming the parameter.
func TestQuery_UndecodableEscapeIsRefusedOnEveryRoute(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		gets := openAPIGets(t, s)

		var lists []string
		for path, op := range gets {
			if op.lists {
				lists = append(lists, path)
			}
		}
		slices.Sort(lists)
		// The enumeration must see the lists, or the test proves nothing.
		for _, want := range []string{"/api/v1/catalog-item-instances",
			"/api/v1/catalog-item-instances/{catalog_item_instance_id}/events"} {
			if !slices.Contains(lists, want) {
				t.Fatalf("list routes found in the document = %q, want %s among them", lists, want)
			}
		}
		t.Logf("list routes: %q", lists)

		for path, op := range gets {
			t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
				t.Parallel()
				// A dummy id: a sub-collection of a missing parent answers
				// 404, which is still not the 400 under test.
				url := pathParam.ReplaceAllString(path, "no-such-id")
				p := s.Do(t, "GET", url+"?max_page_size=%ZZ", nil).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
				if len(p.Fields) != 1 || p.Fields[0]["field"] != "max_page_size" {
					t.Errorf("fields = %v, want one naming max_page_size", p.Fields)
				}
				if !strings.Contains(p.Detail, "max_page_size") || !strings.Contains(p.Detail, "%ZZ") {
					t.Errorf("detail %q does not say max_page_size's escape %%ZZ could not be decoded", p.Detail)
				}

				// A route that does not list refuses max_page_size itself
				// (issue 22): the escaped value was the only fault of a list's.
				query := ""
				if op.lists {
					query = "?max_page_size=5"
				}
				clean := s.Do(t, "GET", url+query, nil)
				if clean.Status == http.StatusBadRequest {
					t.Fatalf("GET %s%s = 400, want the bad escape to be the only cause: %s", url, query, clean.Body)
				}
				if op.lists && !pathParam.MatchString(path) && clean.Status != http.StatusOK {
					t.Fatalf("GET %s?max_page_size=5 = %d, want 200: %s", url, clean.Status, clean.Body)
				}
			})
		}
	})
}
