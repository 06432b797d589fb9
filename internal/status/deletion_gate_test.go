package status

import (
	"testing"
	"time"
)

// cleaned is adapter's report that it cleaned up after the deletion at
// generation: Applied=False, Health=True, observed at observed.
func cleaned(adapter string, generation int64, observed time.Time) Report {
	return Report{Adapter: adapter, ObservedGeneration: generation, ObservedTime: observed,
		Applied: ReportCondition{Status: False}, Available: ReportCondition{Status: False},
		Health: ReportCondition{Status: True}}
}

// An adapter's report passes the gate only at the deletion's generation,
// with Finalized=True, or with Applied=False, Health=True and an
// observation made no earlier than the deletion (DESIGN §4).
func TestAdapterHold_OnlyAFreshCleanupPasses(t *testing.T) {
	t.Parallel()
	o := Order{ID: "web", ServiceType: "app", Generation: 4, DeletedAt: &deletedAt}
	with := func(change func(*Report)) Report {
		r := cleaned("dns", 4, deletedAt)
		change(&r)
		return r
	}
	cases := []struct {
		name string
		r    Report
		want string
	}{
		{"cleaned up at the deletion's moment", cleaned("dns", 4, deletedAt), ""},
		{"cleaned up after", cleaned("dns", 4, deletedAt.Add(time.Second)), ""},
		{"stale generation, whatever it says", with(func(r *Report) { r.ObservedGeneration, r.Finalized.Status = 3, True }),
			"adapter dns to report on the deletion (generation 4; its last report is of 3)"},
		{"finalized alone passes", with(func(r *Report) {
			r.Applied.Status, r.Health.Status, r.Finalized.Status = True, False, True
			r.ObservedTime = deletedAt.Add(-time.Hour)
		}), ""},
		{"finalized false does not", with(func(r *Report) { r.Applied.Status, r.Finalized.Status = True, False }),
			"adapter dns to report Applied=False and Health=True"},
		{"health false gives its reason", with(func(r *Report) {
			r.Health = ReportCondition{Status: False, Reason: "Stuck", Message: "finalizer left"}
		}), "adapter dns, which reports Health=False (Stuck finalizer left)"},
		{"still applied", with(func(r *Report) { r.Applied.Status = True }),
			"adapter dns to report Applied=False and Health=True"},
		{"applied missing", with(func(r *Report) { r.Applied = ReportCondition{} }),
			"adapter dns to report Applied=False and Health=True"},
		{"health unknown", with(func(r *Report) { r.Health.Status = Unknown }),
			"adapter dns to report Applied=False and Health=True"},
		{"observed before the deletion", cleaned("dns", 4, deletedAt.Add(-time.Nanosecond)),
			"adapter dns to report an observation made after the deletion"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := AdapterHold(o, c.r); got != c.want {
				t.Errorf("AdapterHold = %q, want %q", got, c.want)
			}
		})
	}
}

// The gate opens when every adapter that reported passes, every required
// adapter reported, and no child is left; else it names each thing it
// waits for, in that order.
func TestDeletionGate_WaitsForAdaptersAndChildren(t *testing.T) {
	t.Parallel()
	o := Order{ID: "web", ServiceType: "app", Generation: 4, DeletedAt: &deletedAt}
	done := cleaned("dns", 4, t0)
	cases := []struct {
		name     string
		a        Adapters
		children bool
		want     string
	}{
		{"nothing to wait for", Adapters{}, false, ""},
		{"every reporter cleaned up", Adapters{Reports: []Report{done, cleaned("k8s", 4, t0)}}, false, ""},
		{"required and cleaned up", Adapters{Required: []string{"dns"}, Reports: []Report{done}}, false, ""},
		{"a reporter that is not required still holds",
			Adapters{Required: []string{"dns"}, Reports: []Report{done, cleaned("k8s", 3, t0)}}, false,
			"adapter k8s to report on the deletion (generation 4; its last report is of 3)"},
		{"required, never reported", Adapters{Required: []string{"dns", "k8s"}, Reports: []Report{done}}, false,
			"adapter k8s, required by service type app, to report its cleanup"},
		{"children left", Adapters{Reports: []Report{done}}, true,
			"its child orders to be removed first (list them with ?parent_id=web)"},
		{"everything at once, reports first", Adapters{Required: []string{"dns", "cert"},
			Reports: []Report{cleaned("dns", 3, t0)}}, true,
			"adapter dns to report on the deletion (generation 4; its last report is of 3); " +
				"adapter cert, required by service type app, to report its cleanup; " +
				"its child orders to be removed first (list them with ?parent_id=web)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := DeletionGate(o, c.a, c.children); got != c.want {
				t.Errorf("DeletionGate = %q, want %q", got, c.want)
			}
		})
	}
}
