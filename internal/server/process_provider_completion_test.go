package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 22, item 12: a process that exits 0 under restart_policy
// on_failure ran to its end: its order stays up, says it completed
// (instance COMPLETED, Ready True with reason Completed), and is not
// failed. A non-zero exit is still a failure.
func TestProcessProvider_ExitZeroIsACompletion(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := startWithProcessProvider(t, engine)
		type order struct {
			State         string `json:"state"`
			Status        string `json:"status"`
			StatusMessage string `json:"status_message"`
			Conditions    []struct {
				Type, Status, Reason, Message string
			} `json:"conditions"`
		}
		get := func(id string) order {
			var o order
			s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id, nil).Want(t, 200).JSON(t, &o)
			return o
		}
		for id, script := range map[string]string{"job-done": "exit 0", "job-broken": "exit 3"} {
			s.Do(t, "POST", "/api/v1/catalog-items?id="+id, map[string]any{
				"service_type": "container",
				"defaults": map[string]any{
					"process":        map[string]any{"command": []string{"sh", "-c", script}},
					"restart_policy": "on_failure", "max_restarts": 0,
				},
			}).Want(t, http.StatusCreated)
			s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, map[string]any{"catalog_item_id": id}).
				Want(t, http.StatusCreated)
		}

		poll(t, "the exit-0 order settles", func() bool { return get("job-done").Status == "COMPLETED" })
		done := get("job-done")
		if done.State != "up" || !strings.HasPrefix(done.StatusMessage, "completed: the process exited with status 0") {
			t.Errorf("exit-0 order: state %q, message %q; want up, a message saying it completed", done.State, done.StatusMessage)
		}
		if len(done.Conditions) != 1 || done.Conditions[0].Status != "True" || done.Conditions[0].Reason != "Completed" {
			t.Errorf("exit-0 order's conditions: %+v, want Ready True, reason Completed", done.Conditions)
		}

		poll(t, "the exit-3 order settles", func() bool { return get("job-broken").Status == "FAILED" })
		poll(t, "the exit-3 order leaves up", func() bool { return get("job-broken").State != "up" })
		if broken := get("job-broken"); broken.Conditions[0].Reason != "Failed" || !strings.Contains(broken.StatusMessage, "exited with status 3") {
			t.Errorf("exit-3 order: %+v, want Ready reason Failed naming status 3", broken)
		}
	})
}

// startWithProcessProvider starts a server that runs the process provider
// in-process, and returns once the provider has registered.
func startWithProcessProvider(t *testing.T, engine store.Engine) *apitest.Server {
	t.Helper()
	s := apitest.Start(t, engine, func(c *server.Config) {
		c.ProcessProvider, c.ProcessProviderAllowCommands = true, []string{"sh"}
	})
	select {
	case <-s.ProcessProvider().Registered():
	case <-deadline(t):
		t.Fatal("the in-process provider never registered")
	}
	return s
}
