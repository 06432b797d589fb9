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

		// The order's log says who reported what: the restart is an event
		// of its own, after the transfers, naming the provider.
		type change struct {
			From any `json:"from"`
			To   any `json:"to"`
		}
		type event struct {
			Version    int64             `json:"version"`
			Trigger    string            `json:"trigger"`
			From       string            `json:"from"`
			To         string            `json:"to"`
			ReportedBy string            `json:"reported_by"`
			Changes    map[string]change `json:"changes"`
		}
		var log struct {
			Items []event `json:"results"`
		}
		s.Do(t, "GET", "/api/v1/catalog-item-instances/crashy/events", nil).Want(t, 200).JSON(t, &log)
		var restart *event
		for i, e := range log.Items {
			if c, ok := e.Changes["restart_count"]; ok && c.To == float64(1) {
				restart = &log.Items[i]
			}
		}
		if restart == nil {
			t.Fatalf("no event records the restart; log: %+v", log.Items)
		}
		if restart.Trigger != "report" || restart.ReportedBy != "process-sp" || restart.From != "up" || restart.To != "up" ||
			restart.Changes["restart_count"].From != float64(0) ||
			!strings.Contains(restart.Changes["status_message"].From.(string), "running as pid "+strconv.Itoa(first)) ||
			!strings.Contains(restart.Changes["status_message"].To.(string), "killed by signal 9") {
			t.Errorf("restart event = %+v, want a report by provider process-sp changing restart_count 0 -> 1 and "+
				"the message from pid %d to why it was killed, the state staying up", restart, first)
		}
		if _, ok := restart.Changes["status"]; ok {
			t.Errorf("restart event changes the status %v, which stayed RUNNING", restart.Changes["status"])
		}
		// Then the provider told the new pid; a report keeps the order's
		// version, so these events follow the transfers of that version.
		last := log.Items[len(log.Items)-1]
		if to, _ := last.Changes["status_message"].To.(string); last.Trigger != "report" || last.Version != restart.Version ||
			last.ReportedBy != "process-sp" || !strings.Contains(to, "running as pid "+strconv.Itoa(second)) {
			t.Errorf("last event = %+v, want the report of pid %d at version %d", last, second, restart.Version)
		}

		// Paging one event at a time walks the same log: the keyset holds
		// the events that share a version apart.
		var walked []event
		for token := ""; ; {
			var page struct {
				Results []event `json:"results"`
				Next    string  `json:"next_page_token"`
			}
			s.Do(t, "GET", "/api/v1/catalog-item-instances/crashy/events?max_page_size=1&page_token="+token, nil).
				Want(t, 200).JSON(t, &page)
			walked = append(walked, page.Results...)
			if token = page.Next; token == "" || len(walked) > len(log.Items) {
				break
			}
		}
		if len(walked) != len(log.Items) {
			t.Fatalf("paged log has %d events, want %d: %+v", len(walked), len(log.Items), walked)
		}
		for i := range walked {
			if walked[i].Version != log.Items[i].Version || walked[i].Trigger != log.Items[i].Trigger ||
				len(walked[i].Changes) != len(log.Items[i].Changes) {
				t.Errorf("paged event %d = %+v, want %+v", i, walked[i], log.Items[i])
			}
		}
	})
}
