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

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// killAtCleanup kills, when the test ends, the process groups whose leaders'
// pids the files named by pidFiles hold (read then, so a restarted
// process's new pid is found), after stop has stopped the server that runs
// the provider: a stopped provider leaves its processes running. A
// process that is this test binary's child is reaped.
func killAtCleanup(t *testing.T, stop func(), pidFiles func() []string) {
	t.Helper()
	t.Cleanup(func() {
		stop()
		for _, name := range pidFiles() {
			b, err := os.ReadFile(name)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || pid <= 0 {
				continue
			}
			if err := syscall.Kill(-pid, syscall.SIGKILL); err == nil {
				_, _ = syscall.Wait4(pid, nil, 0, nil) // ECHILD unless ours
			}
		}
	})
}

// Stopping the server leaves the in-process provider's processes running,
// and the provider of the next server on the same data dir adopts them: an
// order with restart_policy always stays up across a restart, on the same
// process, which is supervised again (killed, it is restarted).
func TestProcessProvider_OrderKeepsItsProcessAcrossAServerRestart(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, func(c *server.Config) {
			c.ProcessProvider, c.ProcessProviderAllowCommands = true, []string{"sh"}
		})
		current := s
		pidFile := filepath.Join(t.TempDir(), "pid")
		killAtCleanup(t, func() { _ = current.Stop(context.Background()) }, func() []string { return []string{pidFile} })
		registered := func() {
			t.Helper()
			select {
			case <-current.ProcessProvider().Registered():
			case <-deadline(t):
				t.Fatal("the in-process provider never registered")
			}
		}
		registered()
		s.Do(t, "POST", "/api/v1/catalog-items?id=pid-writer", map[string]any{
			"service_type": "container",
			"defaults": map[string]any{
				"process":        map[string]any{"command": []string{"sh", "-c", "echo $$ > " + pidFile + "; exec sleep 600"}},
				"restart_policy": "always",
			},
		}).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=lasting", map[string]any{"catalog_item_id": "pid-writer"}).
			Want(t, http.StatusCreated)

		type order struct {
			State      string `json:"state"`
			InstanceID string `json:"instance_id"`
		}
		get := func() order {
			var o order
			current.Do(t, "GET", "/api/v1/catalog-item-instances/lasting?show_deleted=true", nil).Want(t, 200).JSON(t, &o)
			return o
		}
		instance := func() (status, message string) {
			var in struct {
				Status        string `json:"status"`
				StatusMessage string `json:"status_message"`
			}
			current.Do(t, "GET", "/api/v1/service-type-instances/"+get().InstanceID+"?show_deleted=true", nil).
				Want(t, 200).JSON(t, &in)
			return in.Status, in.StatusMessage
		}
		pidNow := func() int {
			b, _ := os.ReadFile(pidFile)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return pid
		}
		poll(t, "the order is up and its process wrote its pid", func() bool { return get().State == "up" && pidNow() > 0 })
		pid := pidNow()

		current = s.Restart(t)
		if err := syscall.Kill(pid, 0); err != nil {
			t.Fatalf("process %d did not survive the server's stop: %v", pid, err)
		}
		registered()
		poll(t, "the new provider reports the adopted process", func() bool {
			status, msg := instance()
			return status == "RUNNING" && strings.Contains(msg, "running as pid "+strconv.Itoa(pid)+" (adopted")
		})
		if o := get(); o.State != "up" {
			t.Errorf("order after the restart: %s, want up", o.State)
		}
		if now := pidNow(); now != pid {
			t.Errorf("pid after the restart: %d, want the same process %d", now, pid)
		}

		// Supervised again: killed, it is restarted, and the order stays up.
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		poll(t, "the process runs again under a new pid", func() bool {
			now := pidNow()
			return now > 0 && now != pid && syscall.Kill(now, 0) == nil
		})
		if o := get(); o.State != "up" {
			t.Errorf("order after its process was restarted: %s, want up", o.State)
		}

		restarted := pidNow()
		current.Do(t, "DELETE", "/api/v1/catalog-item-instances/lasting", nil).Want(t, http.StatusAccepted)
		poll(t, "the order is terminated", func() bool { return get().State == "terminated" })
		poll(t, "the process is gone", func() bool { return errors.Is(syscall.Kill(restarted, 0), syscall.ESRCH) })
	})
}
