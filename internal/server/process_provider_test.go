package server_test

import (
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
		s := apitest.Start(t, engine, func(c *server.Config) { c.ProcessProvider = true })
		select {
		case <-s.ProcessProvider().Registered():
		case <-deadline(t):
			t.Fatal("the in-process provider never registered")
		}
		pidFile := filepath.Join(t.TempDir(), "pid")
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
