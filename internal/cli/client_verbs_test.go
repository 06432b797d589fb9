package cli_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/poll"
)

// Issue 22, item 14: repair, reconcile and restart of an app instance
// (--wait prints the steps as they advance), app-instances and
// repair-operations for get and describe, delete --force, and -o name
// taken back as KIND/ID.
func TestClient_RepairForceDeleteAndKindSlashID(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	killWorkloadsAtCleanup(t, data) // f1 is force-deleted: its process is left to us
	url := startedURL(t, "server", "--dev", "--data-dir", data, "--listen", "127.0.0.1:0")
	c := newClient(t, url)

	// The in-process provider registers just after the server starts.
	poll.Until(t, "sc1 ordered (503 until the provider registers)", func() bool {
		code, _, _ := c.run("order", "sleeper-cluster", "--id", "sc1", "--wait")
		return code == 0
	})
	poll.Until(t, "sc1's runtime reported", func() bool {
		rows := table(c.ok("get", "app-instance", "sc1"))
		return len(rows) == 2 && rows[1][3] == "healthy"
	})
	if rows := table(c.ok("get", "orders")); rows[0][5] != "HEALTH" {
		t.Errorf("get orders has no HEALTH column after READY: %q", rows[0])
	}

	t.Run("a 404 names the id", func(t *testing.T) {
		for _, args := range [][]string{{"get", "order", "nope"}, {"get", "policy", "nope"}, {"describe", "app-instance", "nope"},
			{"get", "lifecycle", "nope"}, {"get", "catalog-item", "nope"}, {"get", "sti", "nope"}} {
			noun := map[string]string{"order": "order", "policy": "policy", "app-instance": "order", "lifecycle": "lifecycle",
				"catalog-item": "catalog item", "sti": "service-type instance"}[args[1]]
			if code, _, stderr := c.run(args...); code != 1 || !strings.Contains(stderr, noun+` "nope" not found`) {
				t.Errorf("steward %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
			}
		}
	})

	t.Run("repair --wait prints the steps and the operation", func(t *testing.T) {
		code, stdout, stderr := c.run("repair", "sc1", "--member", "agent-1", "--wait", "--interval", "50ms")
		if code != 0 {
			t.Fatalf("repair --wait: exit %d\n%s\n%s", code, stdout, stderr)
		}
		progress := regexp.MustCompile(`(?m)^repair-operations/sc1/\S+: status (\w+), (\d)/8 steps done`).FindAllStringSubmatch(stderr, -1)
		// A repair may end before the first look (one line, the last):
		// what matters is that the last line says every step is done.
		if len(progress) == 0 || progress[len(progress)-1][1] != "succeeded" || progress[len(progress)-1][2] != "8" {
			t.Errorf("repair --wait progress lines:\n%s", stderr)
		}
		rows := table(stdout)
		if len(rows) != 2 || rows[1][1] != "sc1" || rows[1][2] != "repair" || rows[1][3] != "member" || rows[1][4] != "succeeded" {
			t.Errorf("repair --wait printed %q", rows)
		}
	})

	t.Run("reconcile, and restart refused for a kubernetes runtime", func(t *testing.T) {
		out := c.ok("reconcile", "app-instances/sc1", "--wait", "-o", "json")
		var op map[string]any
		if err := json.Unmarshal([]byte(out), &op); err != nil || op["action"] != "reconcile" || op["status"] != "succeeded" {
			t.Errorf("reconcile --wait -o json: %v %v", op["status"], err)
		}
		if code, _, stderr := c.run("restart", "sc1"); code != 1 || !strings.Contains(stderr, "RESTART_NOT_SUPPORTED") {
			t.Errorf("restart of a kubernetes runtime: exit %d\n%s", code, stderr)
		}
		for _, args := range [][]string{{"repair", "sc1", "--scope", "member"}, {"repair", "policies/sc1"}, {"get", "repair-operations"}} {
			if code, _, stderr := c.run(args...); code != 2 {
				t.Errorf("steward %s: exit %d, want 2\n%s", strings.Join(args, " "), code, stderr)
			}
		}
	})

	t.Run("repair operations listed, and -o name read back", func(t *testing.T) {
		names := strings.Fields(c.ok("get", "repair-operations", "--app-instance", "sc1", "-o", "name"))
		if len(names) != 2 || !strings.HasPrefix(names[0], "repair-operations/sc1/") {
			t.Fatalf("get repair-operations --app-instance sc1 -o name: %q", names)
		}
		if out := c.ok("describe", names[0]); !strings.Contains(out, "Action:") || !strings.Contains(out, "member_health_check") {
			t.Errorf("describe %s:\n%s", names[0], out)
		}
		rows := table(c.ok(append([]string{"get"}, names...)...))
		if len(rows) != 3 || rows[1][2] != "repair" || rows[2][2] != "reconcile" {
			t.Errorf("get of both names: %q", rows)
		}
		name := strings.TrimSpace(c.ok("get", "order", "sc1", "-o", "name"))
		if out := c.ok("describe", name); !strings.Contains(out, "Catalog Item Id:  sleeper-cluster") {
			t.Errorf("describe %s:\n%s", name, out)
		}
		if out := c.ok("wait", name, "--for", "state=up"); out != "" {
			t.Errorf("wait %s printed %q", name, out)
		}
	})

	t.Run("delete of get -o name, and delete --force", func(t *testing.T) {
		c.ok("order", "sleeper", "--id", "d1", "-l", "batch=x")
		c.ok("order", "sleeper", "--id", "d2", "-l", "batch=x")
		names := strings.Fields(c.ok("get", "orders", "-l", "batch=x", "-o", "name"))
		out := c.ok(append([]string{"delete", "--wait"}, names...)...)
		if out != "catalog-item-instances/d1 deleted\ncatalog-item-instances/d2 deleted\n" {
			t.Errorf("delete $(get -o name) --wait: %q", out)
		}

		c.ok("order", "sleeper", "--id", "f1", "--wait")
		if out := c.ok("delete", "order", "f1", "--force", "--reason", "provider gone"); out != "catalog-item-instances/f1 force-deleted\n" {
			t.Errorf("delete --force: %q", out)
		}
		var o map[string]any
		if err := json.Unmarshal([]byte(c.ok("get", "order", "f1", "-o", "json")), &o); err != nil || o["state"] != "terminated" {
			t.Errorf("after delete --force: state %v (%v)", o["state"], err)
		}
		if out := c.ok("describe", "order", "f1"); !strings.Contains(out, "force_delete") {
			t.Errorf("describe after delete --force has no force_delete event:\n%s", out)
		}
		for _, args := range [][]string{{"delete", "order", "x", "--force"}, {"delete", "policy", "p", "--force", "--reason", "r"}} {
			if code, _, stderr := c.run(args...); code != 2 {
				t.Errorf("steward %s: exit %d, want 2\n%s", strings.Join(args, " "), code, stderr)
			}
		}
	})
}
