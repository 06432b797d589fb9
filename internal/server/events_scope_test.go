package server_test

import (
	"github.com/stewardhq/steward/api"

	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 22, item 4: a server on PostgreSQL with its own embedded NATS says,
// at start and in its health, that its events stay inside this replica;
// health stays 200 "ok" (a warning, not a failure). On SQLite (one
// process) the scope is the same but there is nothing to warn of.
func TestHealth_SaysEventsStayInsideTheReplica(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		var logs apitest.Logs
		s := apitest.Start(t, engine, logs.CaptureLogs)
		var h struct {
			Status      string   `json:"status"`
			EventsScope string   `json:"events_scope"`
			Warnings    []string `json:"warnings"`
			// Issue 46, item 7: what a client compares its own with.
			APIRevision int `json:"api_revision"`
		}
		s.Do(t, "GET", "/api/v1/health", nil).Want(t, http.StatusOK).JSON(t, &h)
		if h.Status != "ok" || h.EventsScope != "replica" || h.Warnings == nil || h.APIRevision != api.Revision {
			t.Fatalf("health = %+v, want ok, events_scope replica, warnings a list, api_revision %d", h, api.Revision)
		}
		const says = "events stay inside this replica"
		logged := strings.Contains(logs.String(), `"level":"WARN","msg":"`+says)
		if engine == store.SQLite {
			if len(h.Warnings) != 0 || logged {
				t.Errorf("on SQLite: warnings %q, logged %v; want none", h.Warnings, logged)
			}
			return
		}
		if len(h.Warnings) != 1 || !strings.Contains(h.Warnings[0], says) || !strings.Contains(h.Warnings[0], "--nats-url") {
			t.Errorf("warnings %q: want one saying %q and naming --nats-url", h.Warnings, says)
		}
		if !logged {
			t.Errorf("no warning at start saying %q; logs:\n%s", says, logs.String())
		}
	})
}
