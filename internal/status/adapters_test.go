package status

import (
	"errors"
	"testing"
)

// report is adapter's report at generation with Available as given, and
// Applied and Health True.
func report(adapter string, generation int64, available ReportCondition) Report {
	return Report{Adapter: adapter, ObservedGeneration: generation, ObservedTime: t0,
		Applied: ReportCondition{Status: True}, Available: available, Health: ReportCondition{Status: True}}
}

// A Ready order with required adapters waits for each of them to report
// Available=True at its generation; others' reports do not count, and
// the message names each adapter that holds it and why.
func TestAdaptersReady_WaitsForEveryRequiredAdapter(t *testing.T) {
	t.Parallel()
	o := Order{Generation: 3}
	ready := Condition{Type: ConditionReady, Status: True, Reason: ReasonRunning, Message: "m", LastTransitionTime: t0}
	yes := ReportCondition{Status: True}
	cases := []struct {
		name  string
		ready Condition
		a     Adapters
		// wantMessage is "" when Ready stays as it was.
		wantMessage string
	}{
		{"no required adapters", ready, Adapters{Reports: []Report{report("dns", 1, ReportCondition{Status: False})}}, ""},
		{"all available", ready, Adapters{Required: []string{"dns", "k8s"},
			Reports: []Report{report("k8s", 3, yes), report("dns", 3, yes)}}, ""},
		{"not ready already", Condition{Type: ConditionReady, Status: False, Reason: ReasonProvisioning},
			Adapters{Required: []string{"dns"}}, ""},
		{"no report", ready, Adapters{Required: []string{"dns"}, Reports: []Report{report("other", 3, yes)}},
			"waiting for adapter dns (no report yet)"},
		{"an older generation", ready, Adapters{Required: []string{"dns"}, Reports: []Report{report("dns", 2, yes)}},
			"waiting for adapter dns (its last report is of generation 2, the order is at 3)"},
		{"not available, with reason and message", ready, Adapters{Required: []string{"dns"},
			Reports: []Report{report("dns", 3, ReportCondition{Status: False, Reason: "NoZone", Message: "zone x"})}},
			"waiting for adapter dns (Available=False: NoZone zone x)"},
		{"unknown without reason", ready, Adapters{Required: []string{"dns"},
			Reports: []Report{report("dns", 3, ReportCondition{Status: Unknown})}},
			"waiting for adapter dns (Available=Unknown: no reason given)"},
		{"each holding adapter, in the required order", ready, Adapters{Required: []string{"k8s", "dns", "ok"},
			Reports: []Report{report("ok", 3, yes), report("dns", 1, yes)}},
			"waiting for adapter k8s (no report yet); adapter dns (its last report is of generation 1, the order is at 3)"},
		{"unreadable reports", ready, Adapters{Required: []string{"dns"}, ReadErr: errors.New("db down")},
			"waiting for adapter reports could not be read: db down"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := AdaptersReady(c.ready, o, c.a)
			want := c.ready
			if c.wantMessage != "" {
				want.Status, want.Reason, want.Message = False, ReasonAdaptersNotReady, c.wantMessage
			}
			if got != want {
				t.Errorf("AdaptersReady = %+v, want %+v", got, want)
			}
		})
	}
}
