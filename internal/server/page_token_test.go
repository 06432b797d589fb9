package server_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// Issue finding 9: a page token is signed for its list, the project the
// request acts in, its filters and its position. Anything else answers 400
// INVALID_PAGE_TOKEN, and a real one opens on any server of the database
// (here: the same server restarted, which keeps nothing but the database).
func TestPageTokens_SignedForListProjectAndFilters(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		var ids []string
		for i := range 4 {
			ids = append(ids, startOp(t, s, "rehydrate", fmt.Sprintf("catalog-item-instances/%d", i)).ID)
		}
		startOp(t, s, "delete", "catalog-item-instances/z")
		const list = "/api/v1/operations?kind=rehydrate"
		page := func(s *apitest.Server, path string, headers ...string) operationPage {
			t.Helper()
			var p operationPage
			s.Do(t, "GET", path, nil, headers...).Want(t, http.StatusOK).JSON(t, &p)
			return p
		}
		refused := func(what, path string, headers ...string) {
			t.Helper()
			r := s.Do(t, "GET", path, nil, headers...)
			if r.Status != http.StatusBadRequest {
				t.Errorf("%s: %d %s, want 400 INVALID_PAGE_TOKEN", what, r.Status, r.Body)
				return
			}
			r.WantProblem(t, http.StatusBadRequest, "INVALID_PAGE_TOKEN")
		}
		first := page(s, list+"&max_page_size=1")
		token := first.NextPageToken
		if len(first.Results) != 1 || token == "" {
			t.Fatalf("first page = %+v, want one operation and a token", first)
		}

		forged := base64.RawURLEncoding.EncodeToString([]byte(`{"t":"2000-01-01T00:00:00Z","i":"zzz"}`))
		refused("a forged cursor", list+"&page_token="+forged)
		refused("a truncated token", list+"&page_token="+token[:len(token)-2])
		refused("other filters", "/api/v1/operations?kind=delete&page_token="+token)
		refused("a filter dropped", "/api/v1/operations?page_token="+token)
		refused("another project", list+"&page_token="+token, "Steward-Project", "elsewhere")
		refused("another list", "/api/v1/tokens?page_token="+token)

		// The orders list's token is no page of /tokens either.
		orderList(t, s, 2)
		orders := page(s, "/api/v1/catalog-item-instances?max_page_size=1")
		if orders.NextPageToken == "" {
			t.Fatal("the orders list gave no token for its second page")
		}
		refused("an orders token on /tokens", "/api/v1/tokens?page_token="+orders.NextPageToken)
		// The tokens list's own tokens page it (their position has no time).
		for _, name := range []string{"reader-1", "reader-2"} {
			s.Do(t, "POST", "/api/v1/tokens", map[string]any{"name": name, "role": "user", "project": "default"}).
				Want(t, http.StatusCreated)
		}
		tokens := page(s, "/api/v1/tokens?max_page_size=1")
		if next := page(s, "/api/v1/tokens?max_page_size=1&page_token="+tokens.NextPageToken); len(next.Results) != 1 {
			t.Errorf("the tokens list's second page = %+v, want one token", next)
		}

		// A server restarted on the database reads the same key: the token
		// still opens, with another page size (AEP-158 allows that) and
		// the filters in another order or with an empty one.
		s = s.Restart(t)
		seen := []string{first.Results[0].ID}
		rest := page(s, "/api/v1/operations?target=&max_page_size=10&kind=rehydrate&page_token="+token)
		for _, o := range rest.Results {
			seen = append(seen, o.ID)
		}
		if !slices.Equal(slices.Sorted(slices.Values(seen)), slices.Sorted(slices.Values(ids))) || rest.NextPageToken != "" {
			t.Errorf("pages after a restart = %v (next %q), want %v once each", seen, rest.NextPageToken, ids)
		}
	})
}

// orderList makes n orders of a catalog item.
func orderList(t *testing.T, s *apitest.Server, n int) {
	t.Helper()
	p := providertest.New(t)
	s.Do(t, "POST", "/api/v1/service-types?id=paged", map[string]any{
		"lifecycle": "simple", "schema": map[string]any{"type": "object"},
	}).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/providers", p.Registration("paged-sp", "paged")).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-items?id=paged", map[string]any{"service_type": "paged", "defaults": map[string]any{}}).
		Want(t, http.StatusCreated)
	for i := range n {
		s.Do(t, "POST", fmt.Sprintf("/api/v1/catalog-item-instances?id=paged-%d", i), map[string]any{"catalog_item_id": "paged"}).
			Want(t, http.StatusCreated)
	}
}
