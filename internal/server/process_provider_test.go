package server_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

func TestProcessProvider_OrderStartsAndDeleteStopsARealProcess(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, func(c *server.Config) {
			c.ProcessProvider, c.ProcessProviderAllowCommands = true, []string{"sh"}
		})
		select {
		case <-s.ProcessProvider().Registered():
		case <-deadline(t):
			t.Fatal("the in-process provider never registered")
		}
		pidFile := filepath.Join(t.TempDir(), "pid")
		killAtCleanup(t, func() { _ = s.Stop(context.Background()) }, func() []string { return []string{pidFile} })
		s.Do(t, "POST", "/api/v1/service-type-instances?id=hello", map[string]any{
			"provider_name": "process-sp",
			"spec": map[string]any{
				"service_type": "container",
				"metadata":     map[string]any{"name": "hello"},
				"process":      map[string]any{"command": []string{"sh", "-c", "echo $$ > " + pidFile + "; exec sleep 600"}},
			},
		}).Want(t, http.StatusAccepted)

		status := func() string {
			var in struct {
				Status string `json:"status"`
			}
			s.Do(t, "GET", "/api/v1/service-type-instances/hello?show_deleted=true", nil).Want(t, 200).JSON(t, &in)
			return in.Status
		}
		poll(t, "the provider reports RUNNING", func() bool { return status() == "RUNNING" })
		var pid int
		poll(t, "the process wrote its pid", func() bool {
			b, err := os.ReadFile(pidFile)
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			return err == nil && pid > 0
		})
		if err := syscall.Kill(pid, 0); err != nil {
			t.Fatalf("process %d is not running: %v", pid, err)
		}

		s.Do(t, "DELETE", "/api/v1/service-type-instances/hello", nil).Want(t, http.StatusAccepted)
		poll(t, "the provider reports DELETED", func() bool { return status() == "DELETED" })
		poll(t, "the process is gone", func() bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) })
	})
}

// poll checks cond until it holds or the test's wait deadline passes.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	timeout := deadline(t)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-timeout:
			t.Fatalf("timed out waiting until %s", what)
		case <-tick.C:
		}
	}
}

// The simple lifecycle with the real process provider, which updates in
// place: an order of the seeded sleeper item runs, a PATCH restarts its
// process with the new arguments under the same instance, a DELETE stops it.
func TestProcessProvider_OrderUpdatedInPlaceThenDeleted(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, func(c *server.Config) { c.ProcessProvider = true })
		select {
		case <-s.ProcessProvider().Registered():
		case <-deadline(t):
			t.Fatal("the in-process provider never registered")
		}
		type order struct {
			State      string `json:"state"`
			InstanceID string `json:"instance_id"`
			Status     string `json:"status"`
		}
		get := func() order {
			var o order
			s.Do(t, "GET", "/api/v1/catalog-item-instances/nap?show_deleted=true", nil).Want(t, 200).JSON(t, &o)
			return o
		}
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=nap", map[string]any{
			"catalog_item_id": "sleeper", "user_values": []any{map[string]any{"path": "process.args", "value": []string{"600"}}},
		}).Want(t, http.StatusCreated)
		poll(t, "the order is up", func() bool { return get().State == "up" })
		first := get().InstanceID

		s.Do(t, "PATCH", "/api/v1/catalog-item-instances/nap", map[string]any{
			"user_values": []any{map[string]any{"path": "process.args", "value": []string{"601"}}},
		}).Want(t, http.StatusOK)
		args := func() any {
			var in struct {
				Spec struct {
					Process struct {
						Args []string `json:"args"`
					} `json:"process"`
				} `json:"spec"`
			}
			s.Do(t, "GET", "/api/v1/service-type-instances/"+first, nil).Want(t, 200).JSON(t, &in)
			return strings.Join(in.Spec.Process.Args, " ")
		}
		poll(t, "the instance runs the new arguments", func() bool { return args() == "601" })
		poll(t, "the order is up again", func() bool { o := get(); return o.State == "up" && o.Status == "RUNNING" })
		if o := get(); o.InstanceID != first {
			t.Errorf("updated in place, yet the instance changed: %s -> %s", first, o.InstanceID)
		}

		s.Do(t, "DELETE", "/api/v1/catalog-item-instances/nap", nil).Want(t, http.StatusAccepted)
		poll(t, "the order is terminated", func() bool { return get().State == "terminated" })
	})
}

// Issue 46: an order whose process fails says why, through the API: its
// status message (and so its last error and Ready condition) ends with the
// process's last lines of stderr.
func TestProcessProvider_FailedOrderSaysWhy(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, func(c *server.Config) { c.ProcessProvider = true })
		select {
		case <-s.ProcessProvider().Registered():
		case <-deadline(t):
			t.Fatal("the in-process provider never registered")
		}
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=broken", map[string]any{
			"catalog_item_id": "sleeper", "user_values": []any{
				map[string]any{"path": "process.args", "value": []string{"notanumber"}},
				map[string]any{"path": "restart_policy", "value": "never"}},
		}).Want(t, http.StatusCreated)
		var o struct {
			State         string `json:"state"`
			Status        string `json:"status"`
			StatusMessage string `json:"status_message"`
			LastError     string `json:"last_error"`
		}
		poll(t, "the order failed", func() bool {
			s.Do(t, "GET", "/api/v1/catalog-item-instances/broken", nil).Want(t, 200).JSON(t, &o)
			return o.State == "failed"
		})
		const want = "process exited with status 1; restart_policy never; stderr: sleep: invalid time interval "
		if o.Status != "FAILED" || !strings.HasPrefix(o.StatusMessage, want) || !strings.Contains(o.StatusMessage, "notanumber") ||
			!strings.HasSuffix(o.LastError, o.StatusMessage) {
			t.Errorf("order = %+v, want FAILED with a status message starting %q and naming the argument, "+
				"which the last error ends with", o, want)
		}
	})
}
