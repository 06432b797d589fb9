package crashtest

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCheck shows what each invariant takes for a violation, and what it
// does not: a harness that cries wolf is no use.
func TestCheck(t *testing.T) {
	t.Parallel()
	start := time.Now()
	deleted := start.Add(time.Second)
	created := func(key, id string, ans Answer) request {
		return request{Kind: kindCreate, Key: key, OrderID: id, WithID: id != "", Attempts: 1, Final: &ans}
	}
	retried := func(r request) request { r.Attempts = 3; return r }
	up := func(id, key, inst string) orderView {
		return orderView{ID: id, State: stateUp, InstanceID: inst, Status: "RUNNING", Labels: map[string]string{keyLabel: key}}
	}
	held := func(id, order string) HeldInstance {
		return HeldInstance{ID: id, OrderID: order, Held: true, Creates: 1, Realisations: 1, Status: "RUNNING",
			Data: "data-of:" + order + ":" + id}
	}
	copied := func(id, order, from, first string) HeldInstance {
		h := held(id, order)
		h.CopiedFrom, h.Data = from, "data-of:"+order+":"+first
		return h
	}
	gone := func(id, order string) HeldInstance {
		h := held(id, order)
		h.Held, h.Deletes = false, 1
		return h
	}
	ok201 := func(id string) Answer { return Answer{Status: http.StatusCreated, ID: id} }
	exists := Answer{Status: http.StatusConflict, Reason: reasonOrderExists}

	cases := map[string]struct {
		reason string
		s      snapshot
		want   []string // invariant and subject of each violation
	}{
		"AllSettled": {
			reason: "An acknowledged order, up on an instance the provider holds, breaks nothing.",
			s: snapshot{requests: []request{created("k1", "", ok201("a"))}, orders: []orderView{up("a", "k1", "i1")},
				held: map[string]HeldInstance{"i1": held("i1", "a")}},
		},
		"RehydratedWithItsData": {
			reason: "An order rehydrated twice holds its first instance's data, copied along; the old ones are being deleted.",
			s: snapshot{requests: []request{created("k1", "", ok201("a"))}, orders: []orderView{up("a", "k1", "i3")},
				held: map[string]HeldInstance{"i1": gone("i1", "a"), "i2": func() HeldInstance {
					h := copied("i2", "a", "i1", "i1")
					h.Held = false
					return h
				}(), "i3": copied("i3", "a", "i2", "i1")}},
		},
		"RehydratedWithoutItsData": {
			reason: "A rehydration that made its new instance without a source lost the data.",
			s: snapshot{requests: []request{created("k1", "", ok201("a"))}, orders: []orderView{up("a", "k1", "i2")},
				held: map[string]HeldInstance{"i1": gone("i1", "a"), "i2": func() HeldInstance {
					h := held("i2", "a")
					h.FirstCreate = time.Second
					return h
				}()}},
			want: []string{InvariantDataKept + " order a"},
		},
		"LeftReadOnly": {
			reason: "A failed copy must leave the order's instance writable again.",
			s: snapshot{requests: []request{created("k1", "", ok201("a"))}, orders: []orderView{up("a", "k1", "i1")},
				held: map[string]HeldInstance{"i1": func() HeldInstance { h := held("i1", "a"); h.ReadOnly = true; return h }()}},
			want: []string{InvariantDataKept + " order a"},
		},
		"AcknowledgedOrderMissing": {
			reason: "An order acknowledged 201 must be listed.",
			s:      snapshot{requests: []request{created("k1", "", ok201("a"))}},
			want:   []string{InvariantOrderOnce + " key k1"},
		},
		"KeyMadeTwoOrders": {
			reason: "A key retried after its answer was lost must not make a second order.",
			s: snapshot{requests: []request{retried(created("k1", "", ok201("b")))},
				orders: []orderView{up("a", "k1", "i1"), up("b", "k1", "i2")},
				held:   map[string]HeldInstance{"i1": held("i1", "a"), "i2": held("i2", "b")}},
			want: []string{InvariantOrderOnce + " key k1"},
		},
		"OrderExistsOnRetry": {
			reason: "A ?id= create retried after an unknown outcome may find its order made: that acknowledges it.",
			s: snapshot{requests: []request{retried(created("k1", "a", exists))}, orders: []orderView{up("a", "k1", "i1")},
				held: map[string]HeldInstance{"i1": held("i1", "a")}},
		},
		"OrderExistsFirstTime": {
			reason: "ORDER_EXISTS to a first attempt is not an answer this client can cause.",
			s: snapshot{requests: []request{created("k1", "a", exists)}, orders: []orderView{up("a", "k1", "i1")},
				held: map[string]HeldInstance{"i1": held("i1", "a")}},
			want: []string{InvariantOrderOnce + " key k1"},
		},
		"OrderStuckCreating": {
			reason: "A live order whose instance the provider never got is not settled.",
			s: snapshot{requests: []request{created("k1", "", ok201("a"))},
				orders: []orderView{{ID: "a", State: "creating", InstanceID: "i1", Labels: map[string]string{keyLabel: "k1"}}}},
			want: []string{InvariantLiveInstanceHeld + " order a"},
		},
		"UnknownInstanceWithoutTask": {
			reason: "An instance nobody's current, without a cleanup task, is a leak; with one it is queued.",
			s: snapshot{requests: []request{created("k1", "", ok201("a"))}, orders: []orderView{up("a", "k1", "i1")},
				held:  map[string]HeldInstance{"i1": held("i1", "a"), "i2": held("i2", "a"), "i3": held("i3", "a")},
				tasks: []taskView{{ID: "t", InstanceID: "i3", Status: "PENDING"}}},
			want: []string{InvariantOtherInstanceCleanup + " instance i2"},
		},
		"CleanupClaimOfTheDead": {
			reason: "A task claimed before the last kill and still IN_PROGRESS is held by a dead process; a younger claim is the live one's.",
			s: snapshot{lastKill: start.Add(2 * time.Second), tasks: []taskView{
				{ID: "dead", InstanceID: "i1", Status: "IN_PROGRESS", UpdateTime: start.Add(time.Second)},
				{ID: "live", InstanceID: "i2", Status: "IN_PROGRESS", UpdateTime: start.Add(3 * time.Second)},
				{ID: "pending", InstanceID: "i3", Status: "PENDING", UpdateTime: start.Add(time.Second)}}},
			want: []string{InvariantCleanupTaskTakenOver + " cleanup task dead"},
		},
		"DeletionNotReached": {
			reason: "After a 202 to DELETE, the provider must hold none of the order's instances, and the order must end.",
			s: snapshot{requests: []request{created("k1", "", ok201("a")),
				{Kind: kindDelete, OrderID: "a", Attempts: 1, Final: &Answer{Status: http.StatusAccepted, InstanceID: "i1"}}},
				orders: []orderView{{ID: "a", State: "deleting", InstanceID: "i1", DeletedAt: &deleted,
					Labels: map[string]string{keyLabel: "k1"}}},
				held:  map[string]HeldInstance{"i1": held("i1", "a")},
				tasks: []taskView{{ID: "t", InstanceID: "i1", Status: "IN_PROGRESS"}}},
			want: []string{InvariantDeletionFinishes + " order a", InvariantDeletionReachesProvider + " order a"},
		},
		"DeletionDone": {
			reason: "A terminated order whose instance the provider deleted is what a deletion should end in.",
			s: snapshot{requests: []request{created("k1", "", ok201("a")),
				{Kind: kindDelete, OrderID: "a", Attempts: 1, Final: &Answer{Status: http.StatusAccepted, InstanceID: "i1"}}},
				orders: []orderView{{ID: "a", State: stateTerminated, InstanceID: "i1", DeletedAt: &deleted,
					Labels: map[string]string{keyLabel: "k1"}}},
				held: map[string]HeldInstance{"i1": gone("i1", "a")}},
		},
		"KeyNeverAnswered": {
			reason: "A key that only ever got 409 IDEMPOTENCY_KEY_IN_USE has no final answer.",
			s: snapshot{clientsDone: true, requests: []request{{Kind: kindRehydrate, Key: "k2", OrderID: "a", Attempts: 40,
				Last: "409 " + reasonKeyInUse}}},
			want: []string{InvariantKeyAnswered + " key k2"},
		},
		"OperationNotDone": {
			reason: "Every Operation ends done.",
			s:      snapshot{ops: []operationView{{ID: "op", Metadata: map[string]any{"kind": "rehydrate"}}}},
			want:   []string{InvariantOperationDone + " operation op"},
		},
		"FinalServerError": {
			reason: "A 5xx replayed as the final answer is a server error the client is left with.",
			s: snapshot{requests: []request{{Kind: kindRehydrate, Key: "k3", OrderID: "a", Attempts: 2,
				Final: &Answer{Status: http.StatusInternalServerError, Reason: "INTERNAL", Replayed: true}}}},
			want: []string{InvariantNoServerError + " key k3"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc.s.start = start
			var got []string
			for _, v := range check(tc.s) {
				got = append(got, v.Invariant+" "+v.Subject)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ncheck(...): -want +got:\n%s\nviolations: %v", tc.reason, diff, check(tc.s))
			}
		})
	}
}
