package lifecycle_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// availableReport is an adapter's report at gen with Available as given.
func availableReport(gen int64, available, reason string) map[string]any {
	return map[string]any{"observed_generation": gen, "observed_time": time.Now().UTC().Format(time.RFC3339Nano),
		"conditions": []map[string]any{
			{"type": "Applied", "status": "True"},
			{"type": "Available", "status": available, "reason": reason},
			{"type": "Health", "status": "True"},
		}}
}

// Ready aggregates the required adapters (deletion-flow seed): a running
// order is Ready only when each required adapter reported Available=True
// at its current generation; until then the reason is AdaptersNotReady and
// the message names each adapter holding it back and why. Other adapters'
// reports do not count, and a change of the realised spec (a new
// generation) waits for fresh reports. A list shows what GET shows.
func TestReady_AggregatesRequiredAdapters(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, true)
		e.withType(t, "app", map[string]any{"required_adapters": []any{"dns", "k8s"}})
		o := e.upOf(t, "shop", "app")

		check := func(when, wantReady string, wantIn []string, wantOut []string) {
			t.Helper()
			got := e.get(t, "shop")
			var list struct{ Results []order }
			e.s.Do(t, "GET", "/api/v1/catalog-item-instances?service_type=app", nil).Want(t, http.StatusOK).JSON(t, &list)
			if len(list.Results) != 1 || readyReason(list.Results[0]) != readyReason(got) ||
				readyMessage(list.Results[0]) != readyMessage(got) {
				t.Errorf("%s: the list's Ready differs from GET's: %+v vs %+v", when, list.Results, got.Conditions)
			}
			msg := readyMessage(got)
			if readyReason(got) != wantReady {
				t.Errorf("%s: Ready %s (%q), want %s", when, readyReason(got), msg, wantReady)
			}
			for _, s := range wantIn {
				if !strings.Contains(msg, s) {
					t.Errorf("%s: Ready message %q does not say %q", when, msg, s)
				}
			}
			for _, s := range wantOut {
				if strings.Contains(msg, s) {
					t.Errorf("%s: Ready message %q says %q", when, msg, s)
				}
			}
		}
		check("running, no report", "False/AdaptersNotReady", []string{"adapter dns (no report yet)", "adapter k8s (no report yet)"}, nil)

		e.putReport(t, "shop", "dns", availableReport(1, "True", ""), http.StatusOK)
		e.putReport(t, "shop", "k8s", availableReport(1, "False", "ImagePullBackOff"), http.StatusOK)
		e.putReport(t, "shop", "metrics", availableReport(1, "False", "NotRequired"), http.StatusOK)
		check("k8s not available", "False/AdaptersNotReady", []string{"adapter k8s (Available=False: ImagePullBackOff)"},
			[]string{"dns", "metrics"})

		e.putReport(t, "shop", "k8s", availableReport(1, "True", ""), http.StatusOK)
		check("every required adapter available", "True/Running", nil, nil)

		// An update realised in place changes the spec: generation 2, and
		// Ready waits for the adapters to report on it.
		e.patch(t, "shop", edit("replicas", 3))
		e.p.WaitForCall(t, providertest.MethodUpdate, o.InstanceID)
		e.report(t, o.InstanceID, "RUNNING")
		got := e.waitState(t, "shop", "up")
		if got.Generation != 2 {
			t.Fatalf("generation after an update: %d, want 2", got.Generation)
		}
		check("after the update", "False/AdaptersNotReady", []string{"adapter dns (its last report is of generation 1",
			"adapter k8s (its last report is of generation 1"}, nil)
		e.putReport(t, "shop", "dns", availableReport(2, "True", ""), http.StatusOK)
		e.putReport(t, "shop", "k8s", availableReport(2, "True", ""), http.StatusOK)
		check("adapters reported on the update", "True/Running", nil, nil)
	})
}
