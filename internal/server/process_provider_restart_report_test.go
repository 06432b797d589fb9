package server_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 22, item 2: a workload process killed is restarted by the process
// provider, which reports the change though the status stays RUNNING: the
// order's message names the new pid, and the order and its service-type
// instance count the restart.
func TestProcessProvider_RestartIsVisibleOnTheOrder(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := startWithProcessProvider(t, engine)
		pidFile := filepath.Join(t.TempDir(), "pid")
		killAtCleanup(t, func() { _ = s.Stop(context.Background()) }, func() []string { return []string{pidFile} })
		s.Do(t, "POST", "/api/v1/catalog-items?id=crashy", map[string]any{
			"service_type": "container",
			"defaults": map[string]any{
				"process":        map[string]any{"command": []string{"sh", "-c", "echo $$ > " + pidFile + "; exec sleep 600"}},
				"restart_policy": "on_failure",
			},
		}).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=crashy", map[string]any{"catalog_item_id": "crashy"}).
			Want(t, http.StatusCreated)

		type order struct {
			State         string `json:"state"`
			InstanceID    string `json:"instance_id"`
			StatusMessage string `json:"status_message"`
			RestartCount  *int64 `json:"restart_count"`
		}
		get := func() order {
			var o order
			s.Do(t, "GET", "/api/v1/catalog-item-instances/crashy", nil).Want(t, 200).JSON(t, &o)
			return o
		}
		restartCount := func() *int64 {
			var in struct {
				RestartCount *int64 `json:"restart_count"`
			}
			s.Do(t, "GET", "/api/v1/service-type-instances/"+get().InstanceID, nil).Want(t, 200).JSON(t, &in)
			return in.RestartCount
		}
		pidNow := func() int {
			b, _ := os.ReadFile(pidFile)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return pid
		}
		poll(t, "the order is up, running its process", func() bool {
			return get().State == "up" && pidNow() > 0 && strings.Contains(get().StatusMessage, "running as pid "+strconv.Itoa(pidNow()))
		})
		if n := restartCount(); n == nil || *n != 0 {
			t.Errorf("restart_count before a restart = %v, want 0", n)
		}
		if n := get().RestartCount; n == nil || *n != 0 {
			t.Errorf("order's restart_count before a restart = %v, want 0", n)
		}
		first := pidNow()
		if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		poll(t, "the process runs again under a new pid", func() bool {
			now := pidNow()
			return now > 0 && now != first && syscall.Kill(now, 0) == nil
		})
		second := pidNow()
		poll(t, "the order's message names the new pid", func() bool {
			return strings.Contains(get().StatusMessage, "running as pid "+strconv.Itoa(second))
		})
		o := get()
		if o.State != "up" || !strings.Contains(o.StatusMessage, "restarted 1 times, last because the process was killed by signal 9") {
			t.Errorf("order after the restart: %+v, want up, saying why it restarted", o)
		}
		if n := restartCount(); n == nil || *n != 1 {
			t.Errorf("restart_count after a restart = %v, want 1", n)
		}
		if o.RestartCount == nil || *o.RestartCount != 1 {
			t.Errorf("order's restart_count after a restart = %v, want 1", o.RestartCount)
		}
	})
}
