package lifecycle_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 24, drift: a provider's report that says whether the instance
// matches its spec shows as the order's Synced condition, on a read, a
// list and the answer to a write: False/Drifted naming each difference,
// then True/InSync. An order whose provider never compared has none; a
// sync that contradicts itself is refused (400) and changes nothing.
func TestOrder_SyncedConditionFollowsTheProvidersComparison(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		type condition struct{ Type, Status, Reason, Message string }
		type shown struct {
			ID         string      `json:"id"`
			Conditions []condition `json:"conditions"`
		}
		synced := func(o shown) *condition {
			for _, c := range o.Conditions {
				if c.Type == "Synced" {
					return &c
				}
			}
			return nil
		}
		read := func() shown {
			t.Helper()
			var o shown
			e.s.Do(t, "GET", "/api/v1/catalog-item-instances/db", nil).Want(t, http.StatusOK).JSON(t, &o)
			return o
		}
		listed := func() shown {
			t.Helper()
			var page struct{ Results []shown }
			e.s.Do(t, "GET", "/api/v1/catalog-item-instances", nil).Want(t, http.StatusOK).JSON(t, &page)
			for _, o := range page.Results {
				if o.ID == "db" {
					return o
				}
			}
			t.Fatal("order db is not listed")
			return shown{}
		}
		instanceID := e.up(t, "db", 2).InstanceID
		report := func(sync map[string]any) int {
			t.Helper()
			body := map[string]any{"status": "RUNNING", "observed_time": time.Now().UTC().Format(time.RFC3339Nano)}
			if sync != nil {
				body["synced"] = sync
			}
			return e.s.Do(t, "PUT", "/api/v1/service-type-instances/"+instanceID+"/status", body).Status
		}

		if c := synced(read()); c != nil {
			t.Fatalf("before any comparison the order shows %+v, want no Synced condition", *c)
		}
		drift := []any{"connection_limit: want 20, found 100", "allow_connections: want true, found false"}
		if code := report(map[string]any{"in_sync": false, "differences": drift}); code != http.StatusOK {
			t.Fatalf("drift report: %d", code)
		}
		for what, o := range map[string]shown{"read": read(), "listed": listed()} {
			c := synced(o)
			if c == nil || c.Status != "False" || c.Reason != "Drifted" ||
				!strings.Contains(c.Message, "connection_limit: want 20, found 100") || !strings.Contains(c.Message, "allow_connections") {
				t.Errorf("%s after a drift report: Synced %+v, want False/Drifted naming both differences", what, c)
			}
		}
		var patched shown
		e.s.Do(t, "PATCH", "/api/v1/catalog-item-instances/db", map[string]any{"labels": map[string]any{"tier": "gold"}}).
			Want(t, http.StatusOK).JSON(t, &patched)
		if c := synced(patched); c == nil || c.Status != "False" {
			t.Errorf("the answer to a PATCH: Synced %+v, want False", c)
		}

		for _, bad := range []map[string]any{{"in_sync": true, "differences": []any{"x"}}, {"in_sync": false}} {
			if code := report(bad); code != http.StatusBadRequest {
				t.Errorf("report of synced %v: %d, want 400", bad, code)
			}
		}
		if c := synced(read()); c == nil || c.Status != "False" {
			t.Errorf("after refused reports: Synced %+v, want still False", c)
		}

		report(map[string]any{"in_sync": true})
		if c := synced(read()); c == nil || c.Status != "True" || c.Reason != "InSync" || c.Message != "" {
			t.Errorf("after an in-sync report: Synced %+v, want True/InSync", c)
		}
		// A report that says nothing of sync leaves it as it was.
		report(nil)
		if c := synced(read()); c == nil || c.Status != "True" {
			t.Errorf("after a report without synced: %+v, want still True", c)
		}
	})
}
