package status

import (
	"testing"
	"time"
)

var (
	t0        = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	deletedAt = t0.Add(-time.Minute)
)

// Ready follows the order's state first (gone, failed, being deleted),
// then its resource, and is True only for a settled, realised order whose
// resource runs or completed.
func TestReady_FromStateAndResource(t *testing.T) {
	t.Parallel()
	running := Order{Resource: ResourceRunning, Realised: true, UpdateTime: t0, LastError: "last", ResourceMessage: "res"}
	with := func(change func(*Order)) Order {
		o := running
		change(&o)
		return o
	}
	cases := []struct {
		name        string
		o           Order
		stuckAfter  time.Duration
		wantStatus  string
		wantReason  string
		wantMessage string
	}{
		{"running", running, time.Hour, True, ReasonRunning, "last"},
		{"completed says the resource's message", with(func(o *Order) { o.Resource = ResourceCompleted }),
			time.Hour, True, ReasonCompleted, "res"},
		{"not running yet", with(func(o *Order) { o.Resource = ResourceNotRunning }), time.Hour, False, ReasonProvisioning, "last"},
		{"not realised", with(func(o *Order) { o.Realised = false }), time.Hour, False, ReasonProvisioning, "last"},
		{"pending update", with(func(o *Order) { o.Pending = true }), time.Hour, False, ReasonProvisioning, "last"},
		{"failed state", with(func(o *Order) { o.Failed = true }), time.Hour, False, ReasonFailed, "last"},
		{"failed state without last error says the resource's", with(func(o *Order) { o.Failed, o.LastError = true, "" }),
			time.Hour, False, ReasonFailed, "res"},
		{"purging without delete", with(func(o *Order) { o.Purging = true }), time.Hour, False, ReasonDeleting, "last"},
		{"deleting", with(func(o *Order) { o.DeletedAt = &deletedAt }), time.Hour, False, ReasonDeleting, "last"},
		{"deleting past the stuck threshold", with(func(o *Order) { o.DeletedAt = &deletedAt }), 30 * time.Second,
			False, ReasonDeletionStuck, "last"},
		{"deleting exactly at the threshold is not stuck", with(func(o *Order) { o.DeletedAt = &deletedAt }), time.Minute,
			False, ReasonDeleting, "last"},
		{"purging, never deleted, is never stuck", with(func(o *Order) { o.Purging = true }), 0, False, ReasonDeleting, "last"},
		{"terminal after delete", with(func(o *Order) { o.Terminal, o.DeletedAt, o.Failed = true, &deletedAt, true }),
			time.Hour, False, ReasonTerminated, "last"},
		{"terminal without delete", with(func(o *Order) { o.Terminal = true }), time.Hour, False, ReasonTerminated, "last"},
		{"terminal in a danger state without delete", with(func(o *Order) { o.Terminal, o.Failed = true, true }),
			time.Hour, False, ReasonRejected, "last"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := Ready(c.o, t0, c.stuckAfter)
			want := Condition{Type: ConditionReady, Status: c.wantStatus, Reason: c.wantReason, Message: c.wantMessage,
				LastTransitionTime: t0}
			if got != want {
				t.Errorf("Ready = %+v, want %+v", got, want)
			}
		})
	}
}
