package status

import (
	"errors"
	"testing"
	"time"
)

// Healthy follows the runtime as last reported; an order without one, or
// gone, has no Healthy condition, and an unreadable runtime is Unknown.
func TestHealthy_FollowsTheRuntime(t *testing.T) {
	t.Parallel()
	o := Order{UpdateTime: t0}
	observed := t0.Add(-2 * time.Second)
	cases := []struct {
		name   string
		o      Order
		rt     Runtime
		wantOK bool
		want   Condition
	}{
		{"none reported", o, Runtime{}, false, Condition{}},
		{"gone", Order{Terminal: true}, Runtime{Reported: true, Health: RuntimeHealthy}, false, Condition{}},
		{"gone, unreadable", Order{Terminal: true}, Runtime{ReadErr: errors.New("x")}, false, Condition{}},
		{"healthy", o, Runtime{Reported: true, Health: RuntimeHealthy, Message: "", ObservedTime: observed}, true,
			Condition{Type: ConditionHealthy, Status: True, Reason: ReasonHealthy, LastTransitionTime: observed}},
		{"degraded", o, Runtime{Reported: true, Health: RuntimeDegraded, Message: "db: restarting", ObservedTime: observed}, true,
			Condition{Type: ConditionHealthy, Status: False, Reason: ReasonDegraded, Message: "db: restarting",
				LastTransitionTime: observed}},
		{"failed", o, Runtime{Reported: true, Health: "failed", Message: "db: exited", ObservedTime: observed}, true,
			Condition{Type: ConditionHealthy, Status: False, Reason: ReasonRuntimeFailed, Message: "db: exited",
				LastTransitionTime: observed}},
		{"unreadable", o, Runtime{ReadErr: errors.New("db down")}, true,
			Condition{Type: ConditionHealthy, Status: Unknown, Reason: ReasonRuntimeUnreadable,
				Message: "the runtime could not be read: db down", LastTransitionTime: t0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, ok := Healthy(c.o, c.rt)
			if ok != c.wantOK || got != c.want {
				t.Errorf("Healthy = %+v, %v; want %+v, %v", got, ok, c.want, c.wantOK)
			}
		})
	}
}
