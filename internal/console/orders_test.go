package console_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
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
		!strings.Contains(p.body, `action="/ui/orders/elsewhere/rehydrate?project=team-b"`) {
		t.Errorf("team-b's order page: %d, want 200 and its forms in team-b", p.status)
	}
	if p := b.get("/ui/orders/elsewhere"); p.status != http.StatusNotFound {
		t.Errorf("team-b's order in the default project: %d, want 404", p.status)
	}
	if p := b.get("/ui/orders?project=%2A"); !strings.Contains(p.body, "<td>team-b</td>") {
		t.Error("every project's orders do not say which project each is in")
	}
}
