package audit_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

type record struct {
	ID    string `json:"id"`
	Actor struct {
		Type, ID string
	} `json:"actor"`
	Action    string         `json:"action"`
	Target    string         `json:"target"`
	Project   string         `json:"project"`
	Outcome   string         `json:"outcome"`
	RequestID string         `json:"request_id"`
	Details   map[string]any `json:"details"`
	Time      time.Time      `json:"time"`
}

func events(t *testing.T, s *apitest.Server, query url.Values) []record {
	t.Helper()
	var all []record
	query.Set("max_page_size", "2") // every answer pages
	for {
		var page struct {
			Results       []record `json:"results"`
			NextPageToken string   `json:"next_page_token"`
		}
		s.Do(t, "GET", "/api/v1/audit-events?"+query.Encode(), nil).Want(t, http.StatusOK).JSON(t, &page)
		all = append(all, page.Results...)
		if page.NextPageToken == "" {
			return all
		}
		query.Set("page_token", page.NextPageToken)
	}
}

func setup(t *testing.T, engine store.Engine, adjust ...func(*server.Config)) *apitest.Server {
	t.Helper()
	s := apitest.Start(t, engine, append([]func(*server.Config){apitest.Fast}, adjust...)...)
	p := providertest.New(t)
	s.Do(t, "POST", "/api/v1/providers", p.Registration("vm-sp", "vm")).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-items?id=small-vm", map[string]any{"service_type": "vm",
		"defaults": map[string]any{"vcpu": map[string]any{"count": 2}, "memory": map[string]any{"size": "2GB"},
			"guest_os": map[string]any{"type": "fedora-39"}}}).Want(t, http.StatusCreated)
	return s
}

// Every mutating request leaves one record naming who, what, on what and
// its request; a create whose id the server chose names that id; reads
// leave none; filters and pages work.
func TestAudit_EveryMutatingRequest(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := setup(t, engine)
		created := s.Do(t, "POST", "/api/v1/catalog-item-instances?id=web", map[string]any{"catalog_item_id": "small-vm"}).
			Want(t, http.StatusCreated)
		var generated struct{ ID string }
		s.Do(t, "POST", "/api/v1/catalog-item-instances", map[string]any{"catalog_item_id": "small-vm"}).
			Want(t, http.StatusCreated).JSON(t, &generated)
		s.Do(t, "GET", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusOK)
		s.Do(t, "PATCH", "/api/v1/catalog-item-instances/web", map[string]any{"labels": map[string]any{"env": "prod"}}).
			Want(t, http.StatusOK)

		got := events(t, s, url.Values{"target": {"catalog_item_instance:web"}})
		if len(got) != 2 || got[0].Action != "catalog_item_instance.create" || got[1].Action != "catalog_item_instance.update" {
			t.Fatalf("records on web: %+v; want its create and its update, and nothing for the GET", got)
		}
		// Issue 22, item 5: the target as the resource's path spells it.
		for _, path := range []string{"catalog-item-instances/web", "/api/v1/catalog-item-instances/web"} {
			if byPath := events(t, s, url.Values{"target": {path}}); len(byPath) != 2 || byPath[0].ID != got[0].ID {
				t.Errorf("records on target %s: %+v; want the two on catalog_item_instance:web", path, byPath)
			}
		}
		s.Do(t, "GET", "/api/v1/audit-events?target=catalog-item-instances", nil).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		c := got[0]
		if c.Outcome != "success" || c.Actor.Type != "user" || c.Actor.ID != "dev" || c.Project != "default" ||
			c.RequestID != created.Header.Get("X-Request-Id") || c.RequestID == "" {
			t.Errorf("create record %+v; want success by user:dev in default, request %s", c, created.Header.Get("X-Request-Id"))
		}
		if g := events(t, s, url.Values{"target": {"catalog_item_instance:" + generated.ID}}); len(g) != 1 {
			t.Errorf("the create with a generated id %s: %d records, want 1", generated.ID, len(g))
		}
		all := events(t, s, url.Values{})
		// providers.create, the provider's first health check (unknown to
		// healthy, as it registered), catalog_item.create, two order
		// creates, one update.
		if len(all) != 6 || all[1].Action != "provider.health.changed" {
			t.Errorf("%d records in all, want 6 (the second its first health check): %+v", len(all), all)
		}
		if n := len(events(t, s, url.Values{"action": {"catalog_item_instance.create"}, "actor": {"user:dev"}})); n != 2 {
			t.Errorf("order creates by user:dev: %d, want 2", n)
		}
		if n := len(events(t, s, url.Values{"since": {c.Time.Add(time.Microsecond).Format(time.RFC3339Nano)}})); n != 2 {
			t.Errorf("records after the first order create: %d, want 2", n)
		}
		s.Do(t, "GET", "/api/v1/audit-events?since=yesterday", nil).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		// Records are read-only.
		for _, method := range []string{"PUT", "PATCH", "DELETE", "POST"} {
			if r := s.Do(t, method, "/api/v1/audit-events/"+c.ID, nil); r.Status != http.StatusNotFound && r.Status != http.StatusMethodNotAllowed {
				t.Errorf("%s of a record answers %d", method, r.Status)
			}
		}
	})
}

// Refused and failed requests are recorded too, with their status and
// reason; a force delete records its reason.
func TestAudit_FailuresAndDetails(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := setup(t, engine)
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=web", map[string]any{"catalog_item_id": "small-vm"}).
			Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=web", map[string]any{"catalog_item_id": "small-vm"}).
			WantProblem(t, http.StatusConflict, "ORDER_EXISTS")
		s.Do(t, "POST", "/api/v1/catalog-item-instances/web:forceDelete", map[string]any{"reason": "x"}).
			WantProblem(t, http.StatusConflict, "NOT_DELETING")
		s.Do(t, "DELETE", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusAccepted)
		s.Do(t, "POST", "/api/v1/catalog-item-instances/web:forceDelete", map[string]any{"reason": "adapter gone"}).
			Want(t, http.StatusNoContent)

		got := events(t, s, url.Values{"target": {"catalog_item_instance:web"}})
		want := []struct{ action, outcome, reason string }{
			{"catalog_item_instance.create", "success", ""},
			{"catalog_item_instance.create", "error", "ORDER_EXISTS"},
			{"catalog_item_instance.force_delete", "error", "NOT_DELETING"},
			{"catalog_item_instance.delete", "success", ""},
			{"catalog_item_instance.force_delete", "success", ""},
		}
		if len(got) != len(want) {
			t.Fatalf("records %+v, want %d", got, len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.Action != w.action || g.Outcome != w.outcome || (w.reason != "" && g.Details["reason"] != w.reason) {
				t.Errorf("record %d: %s %s %v; want %s %s %s", i, g.Action, g.Outcome, g.Details, w.action, w.outcome, w.reason)
			}
		}
		if got[1].Details["status"] != 409.0 {
			t.Errorf("failed create's details %v, want status 409", got[1].Details)
		}
		if got[4].Details["reason"] != "adapter gone" {
			t.Errorf("force delete's details %v, want its reason", got[4].Details)
		}
	})
}

// Outside --dev a request without a valid token is refused and recorded as
// denied, by an anonymous actor.
func TestAudit_DeniedWithoutToken(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, apitest.Fast, func(c *server.Config) { c.Dev, c.APIToken = false, "secret" })
		s.Do(t, "DELETE", "/api/v1/catalog-item-instances/web", nil).WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")
		var page struct{ Results []record }
		s.Do(t, "GET", "/api/v1/audit-events", nil, "Authorization", "Bearer secret").
			Want(t, http.StatusOK).JSON(t, &page)
		var denied []record
		for _, r := range page.Results {
			if r.Outcome == "denied" {
				denied = append(denied, r)
			}
		}
		if len(denied) != 1 || denied[0].Action != "catalog_item_instance.delete" || denied[0].Actor.Type != "anonymous" ||
			denied[0].Target != "catalog_item_instance:web" {
			t.Fatalf("denied records %+v; want the refused DELETE, by anonymous", denied)
		}
	})
}
