package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
)

// startDev starts a server with the in-process provider, as --dev does,
// once that provider registered.
func startDev(t *testing.T) *apitest.Server {
	t.Helper()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider = true })
	select {
	case <-s.ProcessProvider().Registered():
	case <-deadline(t):
		t.Fatal("the in-process provider never registered")
	}
	return s
}

// What the README's run command promises: a provider and a catalog to order
// from, and an order that becomes a real, running process.
func TestDev_OrderFromTheSeededCatalogRunsAProcess(t *testing.T) {
	t.Parallel()
	s := startDev(t)
	s.Do(t, "GET", "/api/v1/catalog-items/sleeper", nil).Want(t, http.StatusOK)

	type order struct {
		ID         string `json:"id"`
		State      string `json:"state"`
		InstanceID string `json:"instance_id"`
	}
	var o order
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=my-sleeper", map[string]any{
		"catalog_item_id": "sleeper", "display_name": "my sleeper",
		"user_values": []map[string]any{{"path": "process.args", "value": []string{"600"}}},
	}).Want(t, http.StatusCreated).JSON(t, &o)
	state := func() string {
		var got order
		s.Do(t, "GET", "/api/v1/catalog-item-instances/my-sleeper?show_deleted=true", nil).Want(t, 200).JSON(t, &got)
		return got.State
	}
	poll(t, "the order is up", func() bool { return state() == "up" })

	s.Do(t, "DELETE", "/api/v1/catalog-item-instances/my-sleeper", nil).Want(t, http.StatusAccepted)
	poll(t, "the order is terminated", func() bool { return state() == "terminated" })

	// A restart on the same data dir keeps the catalog as it is.
	s = s.Restart(t)
	s.Do(t, "GET", "/api/v1/catalog-items/sleeper", nil).Want(t, http.StatusOK)
}

// Issue 22, item 19: the README's adapter walkthrough orders the dev
// catalog's namespaced-sleeper, whose type requires the example adapter.
// The in-process provider runs it (no 503), and it is Ready only once
// cluster-namespace reported Available at its generation; a DELETE waits
// for the adapter's cleanup, then the process stops and the order goes.
func TestDev_NamespacedSleeperWaitsForTheExampleAdapter(t *testing.T) {
	t.Parallel()
	s := startDev(t)
	var st struct {
		RequiredAdapters []string `json:"required_adapters"`
	}
	s.Do(t, "GET", "/api/v1/service-types/namespaced-process", nil).Want(t, http.StatusOK).JSON(t, &st)
	if len(st.RequiredAdapters) != 1 || st.RequiredAdapters[0] != "cluster-namespace" {
		t.Fatalf("namespaced-process requires %v, want [cluster-namespace]", st.RequiredAdapters)
	}

	type order struct {
		State      string
		Provider   string `json:"provider_name"`
		Generation int64
		Conditions []struct{ Type, Status, Reason string }
	}
	get := func() order {
		var o order
		s.Do(t, "GET", "/api/v1/catalog-item-instances/ns1?show_deleted=true", nil).Want(t, http.StatusOK).JSON(t, &o)
		return o
	}
	readyIs := func(o order, status, reason string) bool {
		for _, c := range o.Conditions {
			if c.Type == "Ready" {
				return c.Status == status && (reason == "" || c.Reason == reason)
			}
		}
		return false
	}
	report := func(gen int64, available, applied string) {
		s.Do(t, "PUT", "/api/v1/catalog-item-instances/ns1/adapter-statuses/cluster-namespace", map[string]any{
			"observed_generation": gen, "observed_time": time.Now().UTC().Format(time.RFC3339Nano),
			"conditions": []map[string]any{{"type": "Applied", "status": applied},
				{"type": "Available", "status": available}, {"type": "Health", "status": "True"}},
		}).Want(t, http.StatusOK)
	}

	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=ns1", map[string]any{"catalog_item_id": "namespaced-sleeper"}).
		Want(t, http.StatusCreated)
	var o order
	poll(t, "the process runs and the order waits for its adapter", func() bool {
		o = get()
		return o.State == "up" && readyIs(o, "False", "AdaptersNotReady")
	})
	if o.Provider != "process-sp" {
		t.Errorf("placed on %q, want process-sp", o.Provider)
	}
	report(o.Generation, "True", "True")
	poll(t, "the order is Ready once the adapter reported", func() bool { o = get(); return readyIs(o, "True", "") })

	s.Do(t, "DELETE", "/api/v1/catalog-item-instances/ns1", nil).Want(t, http.StatusAccepted)
	poll(t, "the deletion waits for the adapter", func() bool { o = get(); return readyIs(o, "False", "Deleting") })
	report(o.Generation, "False", "False")
	poll(t, "the order is removed once the adapter confirmed its cleanup", func() bool { return get().State == "terminated" })
}
