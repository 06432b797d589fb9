package crashtest

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
)

// resyncAfter is the --resync-after the replicas run with: shorter than
// the default (30s) to keep the test quick; the bound below holds for the
// default as well.
const resyncAfter = "3s"

// TestResync_ReportsToAKilledReplicaAreNotLost (issue 22, item 1): two
// `steward server` replicas share one PostgreSQL; a `steward provider
// process` reports only to replica B, and B is killed with SIGKILL. Orders
// placed through replica A still reach "up" within 60s: A reads the
// instances back from the provider (resync), since their RUNNING reports
// go nowhere.
func TestResync_ReportsToAKilledReplicaAreNotLost(t *testing.T) {
	r := newReplicas(t)
	call := func(s *serverProc, method, path string, body any) (int, map[string]any) {
		t.Helper()
		return r.call(s, method, path, "", body)
	}
	dumpLogs := func() {
		if !t.Failed() {
			return
		}
		for _, name := range []string{"a", "b", "provider"} {
			if b, err := os.ReadFile(filepath.Join(r.dir, name+".log")); err == nil {
				t.Logf("%s.log (last 4000 bytes):\n%s", name, tail(b, 4000))
			}
		}
	}
	t.Cleanup(dumpLogs)

	a, b := r.start("a", "--resync-after", resyncAfter), r.start("b", "--resync-after", resyncAfter)
	if code, body := call(a, "POST", "/api/v1/catalog-items?id=sleeper", map[string]any{"service_type": "container",
		"defaults": map[string]any{"process": map[string]any{"command": []any{"sleep"}, "args": []any{"120"}},
			"restart_policy": "never"}}); code != http.StatusCreated {
		t.Fatalf("create the catalog item: %d %v", code, body)
	}
	providerAddr := "127.0.0.1:" + strconv.Itoa(r.freePort())
	prov := &serverProc{bin: r.bin, env: newServerProc(serverParams{}).env, logPath: filepath.Join(r.dir, "provider.log"),
		base: "http://" + providerAddr, hc: &http.Client{Timeout: time.Second, Transport: newTransport()},
		args: []string{"provider", "process", "--steward-url", b.base, "--listen", providerAddr,
			"--work-dir", filepath.Join(r.dir, "processes"), "--log-level", "info", "--allow-root"}}
	if err := prov.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prov.stop(10 * time.Second) })
	poll.UntilWithin(t, 30*time.Second, "the provider registered through replica B", func() bool {
		code, p := call(a, "GET", "/api/v1/providers/process-sp", nil)
		return code == http.StatusOK && p["status"] == "healthy"
	})

	b.kill()
	killed := time.Now()
	const orders = 4
	for i := range orders {
		if code, body := call(a, "POST", fmt.Sprintf("/api/v1/catalog-item-instances?id=o%d", i),
			map[string]any{"catalog_item_id": "sleeper"}); code != http.StatusCreated {
			t.Fatalf("order o%d through replica A: %d %v", i, code, body)
		}
	}
	states := map[string]string{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("order states: %v", states)
		}
	})
	poll.UntilWithin(t, 60*time.Second, "every order is up within 60s of B's SIGKILL", func() bool {
		up := 0
		for i := range orders {
			id := fmt.Sprintf("o%d", i)
			_, o := call(a, "GET", "/api/v1/catalog-item-instances/"+id, nil)
			states[id], _ = o["state"].(string)
			if states[id] == "up" {
				up++
			}
		}
		return up == orders
	})
	t.Logf("every order up %v after B's SIGKILL (--resync-after %s)", time.Since(killed).Round(time.Millisecond), resyncAfter)
	// The order's log says how it learnt: a resync, from its provider.
	for i := range orders {
		id := fmt.Sprintf("o%d", i)
		_, page := call(a, "GET", "/api/v1/catalog-item-instances/"+id+"/events", nil)
		events, _ := page["results"].([]any)
		if !hasResyncedRunning(events) {
			t.Errorf("events of %s: %v, want one with trigger resync by process-sp changing status to RUNNING", id, events)
		}
	}
	// The provider keeps its processes across its own restarts, so they
	// are deleted here, not left to its stop. Its DELETED reports go to B
	// too: A learns of them by resync as well.
	for i := range orders {
		call(a, "DELETE", fmt.Sprintf("/api/v1/catalog-item-instances/o%d", i), nil)
	}
	poll.UntilWithin(t, 60*time.Second, "every order is removed (a tombstone)", func() bool {
		for i := range orders {
			id := fmt.Sprintf("o%d", i)
			code, o := call(a, "GET", "/api/v1/catalog-item-instances/"+id, nil)
			states[id], _ = o["state"].(string)
			if code != http.StatusNotFound && o["expire_time"] == nil {
				return false
			}
		}
		return true
	})
}

// hasResyncedRunning tells whether an order's events hold the resync that
// found its instance RUNNING.
func hasResyncedRunning(events []any) bool {
	for _, e := range events {
		ev, _ := e.(map[string]any)
		changes, _ := ev["changes"].(map[string]any)
		status, _ := changes["status"].(map[string]any)
		if ev["trigger"] == "resync" && ev["reported_by"] == "process-sp" && status["to"] == "RUNNING" {
			return true
		}
	}
	return false
}

// tail is the last n bytes of b.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
