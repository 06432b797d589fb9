package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// Issue 25: an app instance's page shows its runtime (health, members) and
// its repair operations with their step progress, and offers the actions
// the API suggests; a repair asked for from the page runs its steps.
// Another order's page shows the adapters' reports and the operations on
// it.
func TestConsole_OrderPageRuntimeRepairsAdaptersOperations(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider = true })
	waitForProvider(t, s)
	b := newBrowser(t, s.URL())

	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=sc1", map[string]any{"catalog_item_id": "sleeper-cluster"}).
		Want(t, http.StatusCreated)
	deleteOrdersAtEnd(t, s, "sc1", "ns")
	poll.Until(t, "sc1's runtime is reported healthy", func() bool {
		var app struct {
			RuntimeState *struct{ Health string } `json:"runtime_state"`
		}
		s.Do(t, "GET", "/api/v1/projects/default/app-instances/sc1", nil).Want(t, http.StatusOK).JSON(t, &app)
		return app.RuntimeState != nil && app.RuntimeState.Health == "healthy"
	})
	p := b.get("/ui/orders/sc1")
	for _, want := range []string{"<h2>Runtime</h2>", "Kind kubernetes", `health-healthy">healthy`, "<td>server-0</td><td>server</td>",
		"<td>agent-1</td><td>agent</td>", `<input type="hidden" name="action" value="reconcile">`,
		`<option value="agent-1">member agent-1 (healthy)</option>`, "No repair operations."} {
		if !strings.Contains(p.body, want) {
			t.Errorf("sc1's page does not show %q", want)
		}
	}
	if strings.Contains(p.body, `value="restart"`) {
		t.Error("sc1's page offers a restart, which a kubernetes runtime refuses")
	}

	if p := b.post("/ui/orders/sc1/repair", url.Values{"action": {"repair"}, "member": {"agent-1"}}); p.status != http.StatusForbidden {
		t.Errorf("repair without the CSRF token: %d, want 403", p.status)
	}
	p = b.post("/ui/orders/sc1/repair?project=default", url.Values{"csrf": {b.csrf()}, "action": {"repair"}, "member": {"agent-1"}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.header.Get("Location"), "project=default") {
		t.Fatalf("repair: %d to %q: %s", p.status, p.header.Get("Location"), p.body)
	}
	if shown := b.get(p.header.Get("Location")); !strings.Contains(shown.body, "The repair started (operation ") {
		t.Errorf("the page after a repair does not name its operation")
	}
	done := regexp.MustCompile(`repair member agent-1</td>\s*<td>succeeded[^<]*</td>\s*<td><progress max="(\d+)" value="(\d+)"`)
	poll.Until(t, "the page shows the repair succeeded with every step done", func() bool {
		m := done.FindStringSubmatch(b.get("/ui/orders/sc1").body)
		return m != nil && m[1] == m[2] && m[1] != "0"
	})
	if p := b.post("/ui/orders/sc1/repair", url.Values{"csrf": {b.csrf()}, "action": {"restart"}}); p.status != http.StatusConflict ||
		!strings.Contains(p.body, "RESTART_NOT_SUPPORTED") {
		t.Errorf("restart of a kubernetes runtime: %d, want the API's 409 RESTART_NOT_SUPPORTED", p.status)
	}

	// An order with a required adapter: its report and the operations on
	// the order show on its page; an order without a runtime offers no
	// repair.
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=ns", map[string]any{"catalog_item_id": "namespaced-sleeper"}).
		Want(t, http.StatusCreated)
	var ns struct {
		Generation int64 `json:"generation"`
	}
	s.Do(t, "GET", "/api/v1/catalog-item-instances/ns", nil).Want(t, http.StatusOK).JSON(t, &ns)
	s.Do(t, "PUT", "/api/v1/catalog-item-instances/ns/adapter-statuses/cluster-namespace", map[string]any{
		"observed_generation": ns.Generation, "observed_time": time.Now().UTC().Format(time.RFC3339Nano),
		"conditions": []map[string]any{{"type": "Applied", "status": "True", "reason": "NamespaceCreated"},
			{"type": "Available", "status": "True"}, {"type": "Health", "status": "True"}},
	}).Want(t, http.StatusOK)
	waitState(t, s, "ns", "up")
	s.Do(t, "POST", "/api/v1/catalog-item-instances/ns:rehydrate", nil).Want(t, http.StatusAccepted)
	p = b.get("/ui/orders/ns")
	for _, want := range []string{"<h2>Adapters</h2>", "<td>cluster-namespace</td>", "Applied=True</span> NamespaceCreated",
		"<h2>Operations</h2>", "<td>rehydrate</td>"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("ns's page does not show %q", want)
		}
	}
	if strings.Contains(p.body, "<h2>Runtime</h2>") || strings.Contains(p.body, "/repair?") {
		t.Error("the page of an order without a runtime shows a runtime or offers a repair")
	}
}

// Issue 25: an order page's live stream hears of what changes below the
// order itself: a repair operation recorded, each step its worker reports,
// an adapter's report. The providers page shows a provider's live
// instances against its capacity. Issue 46, item 11: an order whose
// provider hands out credentials offers Rotate credentials, asked for on
// a confirmation page.
func TestConsole_LiveStreamFollowsRepairStepsAndAdapterReports(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite)
	p := providertest.New(t, func(c *providertest.Config) { c.Repair = true })
	reg := p.Registration("k8s-sp", "rke2")
	reg.Capacity = map[string]int64{"instances": 5, "vcpu": 64}
	reg.Operations = append(reg.Operations, provider.OperationCredentials)
	s.Do(t, "POST", "/api/v1/providers", reg).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/service-types?id=rke2", map[string]any{"schema": map[string]any{"type": "object"},
		"runtime": map[string]any{"kind": "kubernetes", "members": true}, "required_adapters": []string{"dns"}}).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-items?id=rke2", map[string]any{"service_type": "rke2"}).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=r1", map[string]any{"catalog_item_id": "rke2"}).Want(t, http.StatusCreated)
	o := placed(t, s, p, "r1")
	s.Do(t, "PUT", "/api/v1/projects/default/app-instances/r1/runtime", map[string]any{"health": "healthy",
		"members":       []map[string]any{{"id": "server-0", "role": "server", "health": "healthy"}},
		"observed_time": time.Now().UTC().Format(time.RFC3339Nano)}).Want(t, http.StatusOK)

	b := newBrowser(t, s.URL())
	if page := b.get("/ui/providers"); !strings.Contains(page.body, `<td class="num">1 of 5</td>`) || !strings.Contains(page.body, "vcpu 64") {
		t.Errorf("the providers page does not show k8s-sp's one live instance of 5 and its vcpu capacity")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, changes := b.stream(ctx, "/ui/events?order=r1")
	req := b.post("/ui/orders/r1/repair", url.Values{"csrf": {b.csrf()}, "action": {"reconcile"}})
	if req.status != http.StatusSeeOther {
		t.Fatalf("reconcile: %d %s", req.status, req.body)
	}
	nextEvent(t, changes, "a reconcile was asked for")
	var ops struct {
		Results []struct{ ID string } `json:"results"`
	}
	s.Do(t, "GET", "/api/v1/projects/default/app-instances/r1/repair-operations", nil).Want(t, http.StatusOK).JSON(t, &ops)
	if len(ops.Results) != 1 {
		t.Fatalf("repair operations %v, want the reconcile", ops.Results)
	}
	s.Do(t, "POST", "/api/v1/projects/default/app-instances/r1/repair-operations/"+ops.Results[0].ID+"/report", map[string]any{
		"status": "running", "steps": []map[string]any{{"name": "precheck", "status": "succeeded"}}}).Want(t, http.StatusOK)
	nextEvent(t, changes, "a step was reported")
	s.Do(t, "PUT", "/api/v1/catalog-item-instances/r1/adapter-statuses/dns", map[string]any{
		"observed_generation": o.Generation, "observed_time": time.Now().UTC().Format(time.RFC3339Nano),
		"conditions": []map[string]any{{"type": "Applied", "status": "False", "reason": "Waiting"},
			{"type": "Available", "status": "False"}, {"type": "Health", "status": "True"}},
	}).Want(t, http.StatusOK)
	nextEvent(t, changes, "an adapter reported")
	page := b.get("/ui/orders/r1")
	if !strings.Contains(page.body, "precheck: succeeded") || !strings.Contains(page.body, "Applied=False</span> Waiting") {
		t.Errorf("r1's page does not show the reported step and the adapter's report")
	}

	rotate := `<a class="button" href="/ui/orders/r1/confirm?action=rotate-credentials&amp;project=default">Rotate credentials…</a>`
	if !strings.Contains(page.body, rotate) {
		t.Fatalf("r1's page, whose provider hands out credentials, does not offer %s", rotate)
	}
	if p := b.post("/ui/orders/r1/rotate-credentials", url.Values{"csrf": {b.csrf()}}); p.status != http.StatusSeeOther ||
		p.header.Get("Location") != "/ui/orders/r1/confirm?action=rotate-credentials" {
		t.Errorf("rotate without its confirmation: %d to %q, want 303 to the confirmation page", p.status, p.header.Get("Location"))
	}
	if p := b.get("/ui/orders/r1/confirm?action=rotate-credentials"); !strings.Contains(p.body, "the old ones are refused") ||
		!strings.Contains(p.body, `action="/ui/orders/r1/rotate-credentials?project=default"`) {
		t.Errorf("the rotation's confirmation page does not say what it does, with its form")
	}
	p2 := b.post("/ui/orders/r1/rotate-credentials", url.Values{"csrf": {b.csrf()}, "confirm": {"yes"}})
	if p2.status != http.StatusSeeOther || !strings.Contains(p2.header.Get("Location"), "Credential+rotation+started") {
		t.Fatalf("rotate: %d to %q: %s", p2.status, p2.header.Get("Location"), p2.body)
	}
	var rotations struct {
		Results []struct{ ID string } `json:"results"`
	}
	s.Do(t, "GET", "/api/v1/operations?kind=rotate_credentials", nil).Want(t, http.StatusOK).JSON(t, &rotations)
	if len(rotations.Results) != 1 {
		t.Errorf("rotations %v, want the one confirmed", rotations.Results)
	}
}

// placedOrder is what tests read of an order once it is placed.
type placedOrder struct {
	InstanceID string `json:"instance_id"`
	Generation int64  `json:"generation"`
}

// placed waits until order id is placed on the test provider p.
func placed(t *testing.T, s *apitest.Server, p *providertest.Server, id string) placedOrder {
	t.Helper()
	var o placedOrder
	poll.Until(t, id+" is placed", func() bool {
		s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id, nil).Want(t, http.StatusOK).JSON(t, &o)
		_, held := p.Instances()[o.InstanceID]
		return o.InstanceID != "" && held
	})
	return o
}

// deleteOrdersAtEnd deletes the orders when the test ends, before its
// server stops, and waits until their provider has removed every instance.
// The
// in-process provider's processes outlive a server that stops (the next one
// on the data directory adopts them), so a test that left its orders would
// leave real processes running.
func deleteOrdersAtEnd(t *testing.T, s *apitest.Server, ids ...string) {
	t.Cleanup(func() {
		for _, id := range ids {
			s.Do(t, "DELETE", "/api/v1/catalog-item-instances/"+id, nil)
		}
		// Every instance, a rehydration's old one included, is gone at
		// the provider.
		poll.UntilWithin(t, time.Minute, "the test's instances are removed at their provider", func() bool {
			var page struct {
				Results []struct{ ID string } `json:"results"`
			}
			s.Do(t, "GET", "/api/v1/service-type-instances", nil).Want(t, http.StatusOK).JSON(t, &page)
			return len(page.Results) == 0
		})
	})
}
