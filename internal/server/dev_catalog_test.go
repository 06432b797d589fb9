package server_test

import (
	"net/http"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
)

// What the README's run command promises: a provider and a catalog to order
// from, and an order that becomes a real, running process.
func TestDev_OrderFromTheSeededCatalogRunsAProcess(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider = true })
	select {
	case <-s.ProcessProvider().Registered():
	case <-deadline(t):
		t.Fatal("the in-process provider never registered")
	}
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
