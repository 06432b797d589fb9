package lifecycle_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// note is an entry of an order's lifecycle log as a rehydration writes it.
type note struct {
	Version      int64                     `json:"version"`
	Trigger      string                    `json:"trigger"`
	OperationID  string                    `json:"operation_id"`
	InstanceID   string                    `json:"instance_id"`
	ProviderName string                    `json:"provider_name"`
	Message      string                    `json:"message"`
	Changes      map[string]map[string]any `json:"changes"`
}

// shownOrder is an order as one read of it shows its cleanup.
type shownOrder struct {
	InstanceID string `json:"instance_id"`
	Cleanup    []struct {
		TaskID       string `json:"task_id"`
		InstanceID   string `json:"instance_id"`
		ProviderName string `json:"provider_name"`
		Status       string `json:"status"`
	} `json:"cleanup"`
}

// A rehydration is in its order's lifecycle log, in order: it started
// (with its operation, the new instance and its provider), the order moved
// onto the new instance once it ran, and the old instance was retired when
// its cleanup task was done. Until then the order's owner, who may not
// read the cleanup queue, sees on the order what is still being removed.
func TestOrders_RehydrationIsLoggedAndItsCleanupShownToTheOwner(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		const root = "root-token"
		s := apitest.Start(t, engine, apitest.Fast, func(c *server.Config) {
			c.Dev, c.APIToken = false, root
			c.CleanupMaxRetries = 1000 // the failing deletes below must not fail the task for good
		})
		as := func(token, method, path string, body any) *apitest.Response {
			return s.Do(t, method, path, body, "Authorization", "Bearer "+token)
		}
		report := func(id string) {
			as(root, "PUT", "/api/v1/service-type-instances/"+id+"/status", map[string]any{
				"status": "RUNNING", "observed_time": time.Now().UTC().Format(time.RFC3339Nano),
			}).Want(t, http.StatusOK)
		}
		p := providertest.New(t)
		as(root, "POST", "/api/v1/providers", p.Registration("vm-sp", "vm")).Want(t, http.StatusCreated)
		as(root, "POST", "/api/v1/catalog-items?id=small-vm", map[string]any{"service_type": "vm",
			"defaults": map[string]any{"memory": map[string]any{"size": "2GB"}, "guest_os": map[string]any{"type": "fedora-39"},
				"vcpu": map[string]any{"count": 2}},
		}).Want(t, http.StatusCreated)
		var tok struct{ Token string }
		as(root, "POST", "/api/v1/tokens", map[string]any{"name": "owner", "role": "user", "project": "default"}).
			Want(t, http.StatusCreated).JSON(t, &tok)
		user := tok.Token

		var o order
		as(user, "POST", "/api/v1/catalog-item-instances?id=web", map[string]any{"catalog_item_id": "small-vm"}).
			Want(t, http.StatusCreated).JSON(t, &o)
		p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
		report(o.InstanceID)
		read := func() shownOrder {
			var v shownOrder
			as(user, "GET", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusOK).JSON(t, &v)
			return v
		}
		if c := read().Cleanup; c == nil || len(c) != 0 {
			t.Fatalf("cleanup of an order with nothing being removed = %#v, want []", c)
		}

		p.FailDeletes(http.StatusServiceUnavailable) // the old instance's cleanup stays pending
		var op struct{ ID string }
		as(user, "POST", "/api/v1/catalog-item-instances/web:rehydrate", nil).Want(t, http.StatusAccepted).JSON(t, &op)
		var newID string
		poll.Until(t, "the new instance is created", func() bool {
			for _, c := range p.Creates() {
				if c.InstanceID != o.InstanceID {
					newID = c.InstanceID
				}
			}
			return newID != ""
		})
		report(newID)
		var shown shownOrder
		poll.Until(t, "the order moved onto its new instance", func() bool {
			shown = read()
			return shown.InstanceID == newID
		})
		if len(shown.Cleanup) != 1 || shown.Cleanup[0].InstanceID != o.InstanceID ||
			shown.Cleanup[0].ProviderName != "vm-sp" || shown.Cleanup[0].TaskID == "" ||
			!slices.Contains([]string{"PENDING", "IN_PROGRESS"}, shown.Cleanup[0].Status) {
			t.Fatalf("the order's owner sees its cleanup %+v, want the old instance %s on vm-sp being removed",
				shown.Cleanup, o.InstanceID)
		}
		task := shown.Cleanup[0].TaskID
		as(user, "GET", "/api/v1/cleanup-tasks/"+task, nil).Want(t, http.StatusForbidden) // the queue stays the admins'

		notes := func() []note {
			var page struct{ Results []note }
			as(user, "GET", "/api/v1/catalog-item-instances/web/events?max_page_size=100", nil).
				Want(t, http.StatusOK).JSON(t, &page)
			return slices.DeleteFunc(page.Results, func(n note) bool {
				return n.Trigger != "rehydrate" && n.Trigger != "cleanup"
			})
		}
		got := notes()
		if len(got) != 2 {
			t.Fatalf("the log's rehydration notes before the cleanup = %+v, want started and moved", got)
		}
		started, moved := got[0], got[1]
		if started.Trigger != "rehydrate" || started.OperationID != op.ID || started.InstanceID != newID ||
			started.ProviderName != "vm-sp" || !strings.Contains(started.Message, "rehydration started") {
			t.Errorf("first note = %+v, want the rehydration's start (operation %s, new instance %s on vm-sp)",
				started, op.ID, newID)
		}
		if moved.Trigger != "rehydrate" || moved.OperationID != op.ID || moved.InstanceID != newID ||
			moved.Changes["instance_id"]["from"] != o.InstanceID || moved.Changes["instance_id"]["to"] != newID ||
			!strings.Contains(moved.Message, "running") {
			t.Errorf("second note = %+v, want the order's move from %s onto %s", moved, o.InstanceID, newID)
		}

		p.SucceedDeletes()
		poll.Until(t, "the old instance's cleanup is done", func() bool { return len(read().Cleanup) == 0 })
		got = notes()
		if len(got) != 3 {
			t.Fatalf("the log's rehydration notes after the cleanup = %+v, want started, moved and retired", got)
		}
		if retired := got[2]; retired.Trigger != "cleanup" || retired.InstanceID != o.InstanceID ||
			retired.ProviderName != "vm-sp" || !strings.Contains(retired.Message, "old instance") ||
			!strings.Contains(retired.Message, task) {
			t.Errorf("third note = %+v, want the old instance %s retired by task %s", retired, o.InstanceID, task)
		}
	})
}
