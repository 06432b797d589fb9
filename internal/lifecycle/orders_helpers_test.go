package lifecycle_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// orders is a server with a test provider "vm-sp" for vm and the catalog
// item small-vm (vcpu.count editable up to 4, ip editable although the
// schema says the provider sets it, to try the r modifier).
type orders struct {
	s *apitest.Server
	p *providertest.Server
}

func setupOrders(t testing.TB, engine store.Engine, providerUpdates bool, adjust ...func(*server.Config)) *orders {
	t.Helper()
	s := apitest.Start(t, engine, append([]func(*server.Config){apitest.Fast}, adjust...)...)
	p := providertest.New(t, func(c *providertest.Config) { c.Update = providerUpdates })
	s.Do(t, "POST", "/api/v1/providers", p.Registration("vm-sp", "vm")).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-items?id=small-vm", map[string]any{
		"service_type": "vm",
		"defaults":     map[string]any{"memory": map[string]any{"size": "2GB"}, "guest_os": map[string]any{"type": "fedora-39"}},
		"fields": []any{
			map[string]any{"path": "vcpu.count", "editable": true, "default": 2, "validation_schema": map[string]any{"maximum": 4}},
			map[string]any{"path": "ip", "editable": true},
		},
	}).Want(t, http.StatusCreated)
	e := &orders{s, p}
	t.Cleanup(func() { // before the server stops
		if t.Failed() {
			e.dump(t)
		}
	})
	return e
}

// dump prints what a failed test needs to tell where an order got stuck:
// the orders, the instances and cleanup tasks, the provider's calls, the
// reconcile changes waiting and the River jobs not completed.
func (e *orders) dump(t testing.TB) {
	for _, path := range []string{"/api/v1/catalog-item-instances?show_deleted=true",
		"/api/v1/service-type-instances?show_deleted=true", "/api/v1/cleanup-tasks"} {
		r := e.s.Do(t, "GET", path, nil)
		t.Logf("dump: GET %s: %d %s", path, r.Status, r.Body)
	}
	t.Logf("dump: provider calls: %+v", e.p.Calls())
	for _, query := range []string{
		"SELECT order_id, kind, instance_id, status, requested_at FROM order_changes",
		"SELECT id, kind, state, attempt, errors FROM river_job WHERE state <> 'completed'",
	} {
		rows, err := e.s.DB().Query(context.Background(), query) // t.Context() is done at cleanup
		if err != nil {
			t.Logf("dump: %s: %v", query, err)
			continue
		}
		for rows.Next() {
			var a, b, c, d, f any
			if err := rows.Scan(&a, &b, &c, &d, &f); err != nil {
				t.Logf("dump: %s: %v", query, err)
				break
			}
			t.Logf("dump: %v | %v | %v | %v | %v", a, b, c, d, f)
		}
		rows.Close()
	}
}

type order struct {
	ID           string `json:"id"`
	State        string `json:"state"`
	Lifecycle    string `json:"lifecycle"`
	Version      int64  `json:"version"`
	Generation   int64  `json:"generation"`
	Status       string `json:"status"`
	InstanceID   string `json:"instance_id"`
	ProviderName string `json:"provider_name"`
	LastError    string `json:"last_error"`
	ETag         string `json:"etag"`
	Attributes   struct {
		Candidate map[string]any `json:"candidate"`
		Active    map[string]any `json:"active"`
		Rollback  map[string]any `json:"rollback"`
	} `json:"attributes"`
	Conditions []struct {
		Type, Status, Reason, Message string
	} `json:"conditions"`
	DeleteTime *time.Time `json:"delete_time"`
	DeletedAt  *time.Time `json:"deleted_at"` // deprecated name of delete_time
	ExpireTime *time.Time `json:"expire_time"`
	ParentID   *string    `json:"parent_id"`
	UpdateTime time.Time  `json:"update_time"`
	CreateTime time.Time  `json:"create_time"`
}

type event struct {
	Version    int64                     `json:"version"`
	Trigger    string                    `json:"trigger"`
	From       string                    `json:"from"`
	To         string                    `json:"to"`
	Operation  string                    `json:"operation"`
	Error      string                    `json:"error"`
	ReportedBy string                    `json:"reported_by"`
	Changes    map[string]map[string]any `json:"changes"`
	InstanceID string                    `json:"instance_id"`
}

func (e *orders) create(t testing.TB, id string, vcpus int) order {
	t.Helper()
	var o order
	e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, map[string]any{
		"catalog_item_id": "small-vm",
		"user_values":     []any{map[string]any{"path": "vcpu.count", "value": vcpus}},
	}).Want(t, http.StatusCreated).JSON(t, &o)
	return o
}

func (e *orders) get(t testing.TB, id string) order {
	t.Helper()
	var o order
	e.s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id+"?show_deleted=true", nil).Want(t, http.StatusOK).JSON(t, &o)
	return o
}

func (e *orders) waitState(t testing.TB, id, state string) order {
	t.Helper()
	var o order
	poll.Until(t, fmt.Sprintf("order %s is %s", id, state), func() bool { o = e.get(t, id); return o.State == state })
	return o
}

// report PUTs a provider status report for an instance.
func (e *orders) report(t testing.TB, instanceID, status string) {
	t.Helper()
	e.s.ReportStatus(t, instanceID, status)
}

// up creates an order and reports its instance RUNNING.
func (e *orders) up(t testing.TB, id string, vcpus int) order {
	t.Helper()
	return e.running(t, id, e.create(t, id, vcpus))
}

// upOf creates an order of item without user values and reports its
// instance RUNNING.
func (e *orders) upOf(t testing.TB, id, item string) order {
	t.Helper()
	var o order
	e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, map[string]any{"catalog_item_id": item}).
		Want(t, http.StatusCreated).JSON(t, &o)
	return e.running(t, id, o)
}

// running reports the instance of the order created as o RUNNING, and
// returns the order once it is up.
func (e *orders) running(t testing.TB, id string, o order) order {
	t.Helper()
	e.p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
	e.report(t, o.InstanceID, "RUNNING")
	return e.waitState(t, id, "up")
}

func (e *orders) patch(t testing.TB, id string, body any) order {
	t.Helper()
	var o order
	e.s.Do(t, "PATCH", "/api/v1/catalog-item-instances/"+id, body).Want(t, http.StatusOK).JSON(t, &o)
	return o
}

func (e *orders) setState(t testing.TB, id, target string, version int64) *apitest.Response {
	t.Helper()
	return e.s.Do(t, "POST", "/api/v1/catalog-item-instances/"+id+":setState",
		map[string]any{"target_state": target, "current_version": version})
}

// events is an order's lifecycle log without the changes its provider
// reported: the transfers, its creation and its deletion.
func (e *orders) events(t testing.TB, id string) []event {
	t.Helper()
	return slices.DeleteFunc(e.log(t, id), func(ev event) bool { return ev.Trigger == "report" || ev.Trigger == "resync" })
}

// log is an order's whole lifecycle log, read in pages of three.
func (e *orders) log(t testing.TB, id string) []event {
	t.Helper()
	var all []event
	token := ""
	for {
		var page struct {
			Results       []event `json:"results"`
			NextPageToken string  `json:"next_page_token"`
		}
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id+"/events?max_page_size=3&page_token="+token, nil).
			Want(t, http.StatusOK).JSON(t, &page)
		all = append(all, page.Results...)
		if token = page.NextPageToken; token == "" {
			return all
		}
	}
}

// path renders events as "from>to" steps, for comparing.
func path(events []event) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = ev.From + ">" + ev.To
	}
	return out
}

// newCreate waits for a create call of an instance other than known and
// returns its id.
func (e *orders) newCreate(t testing.TB, known ...string) string {
	t.Helper()
	var id string
	poll.Until(t, "a new instance is created", func() bool {
		for _, c := range e.p.Creates() {
			if !slices.Contains(known, c.InstanceID) {
				id = c.InstanceID
				return true
			}
		}
		return false
	})
	return id
}

func vcpu(attrs map[string]any) any {
	v, _ := attrs["vcpu"].(map[string]any)
	return v["count"]
}

func edit(path string, value any) map[string]any {
	return map[string]any{"edits": []any{map[string]any{"path": path, "value": value}}}
}
