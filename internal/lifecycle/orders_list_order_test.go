package lifecycle_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// listIDs pages through GET /api/v1/catalog-item-instances?<query> in
// pages of 2 as project, and returns the orders' project/id in the order
// listed and the number of pages.
func listIDs(t *testing.T, e *orders, project, query string) (ids []string, pages int) {
	t.Helper()
	token := ""
	for range 20 {
		var page struct {
			Results []struct {
				ID      string `json:"id"`
				Project string `json:"project"`
			} `json:"results"`
			NextPageToken string `json:"next_page_token"`
		}
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances?max_page_size=2&"+query+"&page_token="+url.QueryEscape(token),
			nil, "Steward-Project", project).Want(t, http.StatusOK).JSON(t, &page)
		pages++
		for _, o := range page.Results {
			ids = append(ids, o.Project+"/"+o.ID)
		}
		if token = page.NextPageToken; token == "" {
			return ids, pages
		}
	}
	t.Fatalf("?%s as %s: more than 20 pages of 2", query, project)
	return nil, 0
}

// Issue 46: order_by=create_time desc lists the orders newest first, page
// after page, in a project and in every project (Steward-Project: *),
// with the filters as oldest first has them; create_time, the default,
// is oldest first. An admin's list of every project pages through all
// projects' orders, and a project's list stays its own; the four run
// different queries, each on its own index (issue 27). A token of one
// order is refused with the other, and a value order_by does not take is
// refused.
func TestOrders_ListOrderBy(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		projects := []string{"default", "p2", "default", "default", "p2", "default", "default", "default"}
		var created, inDefault, prod []string
		for i, project := range projects {
			id := fmt.Sprintf("o%d", i)
			env := []string{"prod", "dev"}[i%2]
			e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, map[string]any{"catalog_item_id": "small-vm",
				"labels": map[string]any{"env": env}}, "Steward-Project", project).Want(t, http.StatusCreated)
			created = append(created, project+"/"+id)
			if project == "default" {
				inDefault = append(inDefault, project+"/"+id)
				if env == "prod" {
					prod = append(prod, project+"/"+id)
				}
			}
		}
		newest := func(ids []string) []string {
			r := slices.Clone(ids)
			slices.Reverse(r)
			return r
		}
		for _, c := range []struct {
			project, filter string
			want            []string
			pages           int
		}{
			{"default", "", inDefault, 3},
			{"*", "", created, 4},
			{"default", "label=env:prod", prod, 2},
			{"default", "service_type=vm&catalog_item_id=small-vm", inDefault, 3},
			{"default", "catalog_item_id=nope", nil, 1},
		} {
			for _, order := range []struct {
				query string
				want  []string
			}{
				{"", c.want},
				{"order_by=create_time", c.want},
				{"order_by=create_time%20desc", newest(c.want)},
			} {
				query := c.filter + "&" + order.query
				got, pages := listIDs(t, e, c.project, query)
				if !slices.Equal(got, order.want) || pages != c.pages {
					t.Errorf("?%s as %s: %v in %d pages, want %v in %d", query, c.project, got, pages, order.want, c.pages)
				}
			}
		}
		listRefusals(t, e)
	})
}

// listRefusals checks that a page token goes on only in the order it was
// made for (with the other order_by it is refused, rather than skipping or
// repeating orders), and that a value order_by does not take is refused,
// naming it. The project lists at least two orders.
func listRefusals(t *testing.T, e *orders) {
	t.Helper()
	orders := []string{"", "order_by=create_time", "order_by=create_time%20desc"}
	tokens := map[string]string{}
	for _, order := range orders {
		var page struct {
			NextPageToken string `json:"next_page_token"`
		}
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances?max_page_size=1&"+order, nil).
			Want(t, http.StatusOK).JSON(t, &page)
		if page.NextPageToken == "" {
			t.Fatalf("?%s: no next page token in pages of 1", order)
		}
		tokens[order] = page.NextPageToken
	}
	desc := func(order string) bool { return order == orders[2] }
	for _, made := range orders {
		for _, used := range orders {
			if made != used && desc(made) == desc(used) {
				continue // the same order, spelt two ways
			}
			path := "/api/v1/catalog-item-instances?max_page_size=1&" + used + "&page_token=" + url.QueryEscape(tokens[made])
			if made == used {
				e.s.Do(t, "GET", path, nil).Want(t, http.StatusOK)
				continue
			}
			e.s.Do(t, "GET", path, nil).WantProblem(t, http.StatusBadRequest, "INVALID_PAGE_TOKEN")
		}
	}
	for _, bad := range []string{"", "create_time%20asc", "create_time%20DESC", "id", "-create_time",
		"create_time,id", "create_time&order_by=create_time%20desc"} {
		p := e.s.Do(t, "GET", "/api/v1/catalog-item-instances?order_by="+bad, nil).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if got := fields(p); !slices.Equal(got, []string{"order_by"}) {
			t.Errorf("?order_by=%s: fields %v, want [order_by]; detail %q", bad, got, p.Detail)
		}
	}
}
