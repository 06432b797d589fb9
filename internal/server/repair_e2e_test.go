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
	"github.com/stewardhq/steward/internal/processprovider"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// The process provider, beside a server with authentication on (as
// outside --dev), runs a process-cluster order as one process per member
// and reports them; a member killed with SIGKILL degrades the runtime (the
// order stays up), and a member-scope repair, delivered with a worker token
// and reported step by step, starts it again.
func TestRepair_ProcessProviderRestartsAKilledMember(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		const root = "root-token"
		s := apitest.Start(t, engine, func(c *server.Config) {
			c.DevCatalog, c.Dev, c.APIToken = true, false, root
		})
		auth := []string{"Authorization", "Bearer " + root}
		var tok struct{ Token string }
		s.Do(t, "POST", "/api/v1/tokens", map[string]any{"name": processprovider.Name, "role": "service_account",
			"provider": processprovider.Name, "service_types": []string{"*"}}, auth...).
			Want(t, http.StatusCreated).JSON(t, &tok)
		d := processprovider.NewDaemon(processprovider.DaemonConfig{StewardURL: s.URL(), Token: tok.Token,
			WorkDir: t.TempDir(), AllowCommands: []string{"sh"}, AllowRoot: true})
		if err := d.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Stop(context.Background()) })
		select {
		case <-d.Registered():
		case <-deadline(t):
			t.Fatal("the process provider never registered")
		}
		pids := t.TempDir()
		killAtCleanup(t, func() { _ = s.Stop(context.Background()) }, func() []string {
			return []string{filepath.Join(pids, "server-0"), filepath.Join(pids, "agent-0")}
		})
		s.Do(t, "POST", "/api/v1/catalog-items?id=pid-cluster", map[string]any{
			"service_type": "process-cluster",
			"defaults": map[string]any{
				"process": map[string]any{"command": []string{"sh", "-c",
					"echo $$ > " + pids + "/$STEWARD_MEMBER_ID; exec sleep 600"}},
				"restart_policy": "never",
				"members":        []map[string]any{{"id": "server-0", "role": "server"}, {"id": "agent-0", "role": "agent"}},
			},
		}, auth...).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=c1", map[string]any{"catalog_item_id": "pid-cluster"}, auth...).
			Want(t, http.StatusCreated)

		type member struct{ ID, Role, Health string }
		var app struct {
			State        string
			RuntimeState *struct {
				Health  string
				Members []member
			} `json:"runtime_state"`
		}
		health := func() (string, map[string]string) {
			s.Do(t, "GET", "/api/v1/projects/default/app-instances/c1", nil, auth...).Want(t, http.StatusOK).JSON(t, &app)
			if app.RuntimeState == nil {
				return "", nil
			}
			hs := map[string]string{}
			for _, m := range app.RuntimeState.Members {
				hs[m.ID] = m.Health
			}
			return app.RuntimeState.Health, hs
		}
		pidOf := func(member string) int {
			b, _ := os.ReadFile(filepath.Join(pids, member))
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return pid
		}
		// The runtime report and the status report that moves the order up
		// travel separately; wait for both before a member dies.
		poll(t, "the order is up, both members run and are reported healthy", func() bool {
			h, ms := health()
			return app.State == "up" && h == "healthy" && len(ms) == 2 && pidOf("server-0") > 0 && pidOf("agent-0") > 0
		})

		killed := pidOf("agent-0")
		if err := syscall.Kill(killed, syscall.SIGKILL); err != nil {
			t.Fatalf("kill agent-0 (%d): %v", killed, err)
		}
		poll(t, "the runtime is reported degraded with agent-0 failed", func() bool {
			h, ms := health()
			return h == "degraded" && ms["agent-0"] == "failed"
		})
		var order struct {
			State      string
			Conditions []struct{ Type, Status, Reason, Message string }
		}
		healthy := func() (status, reason, message string) {
			s.Do(t, "GET", "/api/v1/catalog-item-instances/c1", nil, auth...).Want(t, http.StatusOK).JSON(t, &order)
			for _, c := range order.Conditions {
				if c.Type == "Healthy" {
					return c.Status, c.Reason, c.Message
				}
			}
			return "", "", ""
		}
		// The order stays up, and says that its runtime is degraded and why.
		if st, reason, msg := healthy(); order.State != "up" || st != "False" || reason != "Degraded" ||
			!strings.Contains(msg, "agent-0") {
			t.Errorf("after a member died: order %s, Healthy %s/%s %q; want up, Healthy False/Degraded naming agent-0",
				order.State, st, reason, msg)
		}

		var op struct {
			ID, Status, Phase string
			Steps             []struct{ Name, Status string }
			Error             *struct{ Code, Message string }
		}
		s.Do(t, "POST", "/api/v1/projects/default/app-instances/c1/repair",
			map[string]any{"action": "repair", "scope": "member", "target_member_id": "agent-0"}, auth...).
			Want(t, http.StatusAccepted).JSON(t, &op)
		poll(t, "the repair finishes", func() bool {
			s.Do(t, "GET", "/api/v1/projects/default/app-instances/c1/repair-operations/"+op.ID, nil, auth...).
				Want(t, http.StatusOK).JSON(t, &op)
			return op.Status == "succeeded" || op.Status == "failed"
		})
		if op.Status != "succeeded" {
			t.Fatalf("repair %s: %+v", op.Status, op)
		}
		for _, st := range op.Steps {
			if st.Status != "succeeded" && st.Status != "skipped" {
				t.Errorf("step %s is %s after a successful repair", st.Name, st.Status)
			}
		}
		poll(t, "agent-0 runs again under a new pid", func() bool {
			pid := pidOf("agent-0")
			return pid > 0 && pid != killed && syscall.Kill(pid, 0) == nil
		})
		poll(t, "the runtime is healthy again", func() bool { h, _ := health(); return h == "healthy" })
		if st, reason, _ := healthy(); st != "True" || reason != "Healthy" {
			t.Errorf("healthy again: the order's Healthy is %s/%s, want True/Healthy", st, reason)
		}
		if err := syscall.Kill(killed, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("the killed process %d is still there: %v", killed, err)
		}

		// Kubernetes-like runtimes are not restarted as a whole.
		s.Do(t, "POST", "/api/v1/projects/default/app-instances/c1/restart", nil, auth...).
			WantProblem(t, http.StatusConflict, "RESTART_NOT_SUPPORTED")
	})
}
