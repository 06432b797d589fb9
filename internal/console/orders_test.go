package console_test

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 25: the orders page filters by label and, for an admin, by project
// ("*": every project's, with the project column telling them apart).
func TestConsole_OrdersFilterByLabelAndProject(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider, c.ProcessProviderNoOp = true, true })
	waitForProvider(t, s)
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=prod-web", map[string]any{"catalog_item_id": "sleeper",
		"labels": map[string]string{"env": "prod"}}).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=dev-web", map[string]any{"catalog_item_id": "sleeper",
		"labels": map[string]string{"env": "dev"}}).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=elsewhere", map[string]any{"catalog_item_id": "sleeper"},
		"Steward-Project", "team-b").Want(t, http.StatusCreated)
	b := newBrowser(t, s.URL())

	for query, want := range map[string][]string{
		"":                    {"prod-web", "dev-web"},
		"?label=env%3Aprod":   {"prod-web"},
		"?project=team-b":     {"elsewhere"},
		"?project=%2A":        {"prod-web", "dev-web", "elsewhere"},
		"?project=%2A&label=": {"prod-web", "dev-web", "elsewhere"},
	} {
		p := b.get("/ui/orders" + query)
		if p.status != http.StatusOK {
			t.Fatalf("orders%s: %d", query, p.status)
		}
		for _, id := range []string{"prod-web", "dev-web", "elsewhere"} {
			shown := strings.Contains(p.body, `href="/ui/orders/`+id+`?project=`)
			if shown != slices.Contains(want, id) {
				t.Errorf("orders%s: shows %s = %v, want %v", query, id, shown, !shown)
			}
		}
	}
	// The link to another project's order names its project, so it opens
	// (without it the page would look in the default project: 404).
	all := b.get("/ui/orders?project=%2A")
	if !strings.Contains(all.body, `href="/ui/orders/elsewhere?project=team-b"`) {
		t.Fatalf("the link to team-b's order does not name its project")
	}
	if p := b.get("/ui/orders/elsewhere?project=team-b"); p.status != http.StatusOK ||
		!strings.Contains(p.body, `href="/ui/orders/elsewhere/confirm?action=rehydrate&amp;project=team-b"`) {
		t.Errorf("team-b's order page: %d, want 200 and its forms in team-b", p.status)
	}
	if p := b.get("/ui/orders/elsewhere"); p.status != http.StatusNotFound {
		t.Errorf("team-b's order in the default project: %d, want 404", p.status)
	}
	if p := b.get("/ui/orders?project=%2A"); !strings.Contains(p.body, "<td>team-b</td>") {
		t.Error("every project's orders do not say which project each is in")
	}
}

// Issue 46: the orders page lists the newest order first (docs/console.md
// says so), and its Next page link goes on to the older ones.
func TestConsole_OrdersNewestFirst(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, func(c *server.Config) { c.ProcessProvider, c.ProcessProviderNoOp = true, true })
		waitForProvider(t, s)
		var newest []string // 26 orders, one more than a page, newest first
		for i := range 26 {
			id := fmt.Sprintf("o%02d", i)
			s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, map[string]any{"catalog_item_id": "sleeper"}).
				Want(t, http.StatusCreated)
			newest = append([]string{id}, newest...)
		}
		b := newBrowser(t, s.URL())
		first := b.get("/ui/orders")
		if got := listedOrders(first); !slices.Equal(got, newest[:25]) {
			t.Fatalf("first page lists %v, want the newest 25, newest first: %v", got, newest[:25])
		}
		next := nextLink.FindStringSubmatch(first.body)
		if next == nil {
			t.Fatalf("26 orders and no Next page link")
		}
		second := b.get(html.UnescapeString(next[1]))
		if got := listedOrders(second); second.status != http.StatusOK || !slices.Equal(got, newest[25:]) {
			t.Fatalf("Next page: %d, lists %v, want %v", second.status, got, newest[25:])
		}
		if nextLink.MatchString(second.body) {
			t.Error("the last page has a Next page link")
		}
	})
}

var (
	orderLink = regexp.MustCompile(`<a class="name" href="/ui/orders/([^"?]+)\?`)
	nextLink  = regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
)

// listedOrders are the ids of the orders a page lists, in its order.
func listedOrders(p page) []string {
	var ids []string
	for _, m := range orderLink.FindAllStringSubmatch(p.body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}
