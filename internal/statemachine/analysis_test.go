package statemachine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/invalid"
)

// tup builds a set of abstract values.
func tup(vs ...sets) tuples {
	var t tuples
	for _, v := range vs {
		t = t.with(v)
	}
	return t
}

// def builds a definition whose states are the transfers' names, for the
// analysis (which does not look at states).
func def(initial string, ts ...Transfer) Definition {
	return Definition{InitialState: initial, Transfers: ts}.normalized()
}

const (
	c = hasCandidate
	a = hasActive
	r = hasRollback
)

func TestApplyAbstract(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		op     Operation
		in     sets
		want   sets
		wantOK bool
	}{
		"PromoteFirst":          {op: OpPromote, in: c, want: a, wantOK: true},
		"PromoteUpdate":         {op: OpPromote, in: c | a, want: a | r, wantOK: true},
		"PromoteDropsRollback":  {op: OpPromote, in: c | a | r, want: a | r, wantOK: true},
		"PromoteNoCandidate":    {op: OpPromote, in: a | r},
		"Rollback":              {op: OpRollback, in: a | r, want: c | a, wantOK: true},
		"RollbackWithoutActive": {op: OpRollback, in: r, want: a, wantOK: true},
		"RollbackNothing":       {op: OpRollback, in: c | a},
		"ClearCandidate":        {op: OpClearCandidate, in: c | a, want: a, wantOK: true},
		"ClearActive":           {op: OpClearActive, in: c | a | r, want: c | r, wantOK: true},
		"ClearRollback":         {op: OpClearRollback, in: a | r, want: a, wantOK: true},
		"ClearEmpty":            {op: OpClearRollback, in: a, want: a, wantOK: true},
		"None":                  {op: "", in: c | r, want: c | r, wantOK: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, ok := applyAbstract(tc.op, tc.in)
			if ok != tc.wantOK || (ok && got != tc.want) {
				t.Errorf("applyAbstract(%q, %03b) = %03b, %v; want %03b, %v", tc.op, tc.in, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestReachableSets(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason string
		def    Definition
		want   map[string]tuples
	}{
		"NewOrder": {reason: "A new order holds only its candidate set.",
			def: def("start"), want: map[string]tuples{"start": tup(c)}},
		"Promote": {reason: "A promote moves the candidate to active.",
			def:  def("start", Transfer{Source: "start", Target: "up", Trigger: TriggerAuto, TargetOperation: OpPromote}),
			want: map[string]tuples{"start": tup(c), "up": tup(a)}},
		"UpdateAddsCandidate": {reason: "An update stores a candidate set before its operation; promoting it keeps a rollback.",
			def: def("start",
				Transfer{Source: "start", Target: "up", Trigger: TriggerAuto, TargetOperation: OpPromote},
				Transfer{Source: "up", Target: "updating", Trigger: TriggerOnUpdate},
				Transfer{Source: "updating", Target: "up", Trigger: TriggerAuto, TargetOperation: OpPromote}),
			want: map[string]tuples{"start": tup(c), "up": tup(a, a|r), "updating": tup(c|a, c|a|r)}},
		"ErrorEdge": {reason: "A failed validation takes the error edge with the error operation.",
			def: def("start", Transfer{Source: "start", Target: "ok", Trigger: TriggerAuto, Validate: true,
				Error: "rejected", ErrorOperation: OpClearCandidate}),
			want: map[string]tuples{"start": tup(c), "ok": tup(c), "rejected": tup(0)}},
		"ResourceRetry": {reason: "A resource transfer's error defaults to its source.",
			def: def("start", Transfer{Source: "start", Target: "done", Trigger: TriggerResource,
				ErrorOperation: OpClearCandidate}),
			want: map[string]tuples{"start": tup(c, 0), "done": tup(c, 0)}},
		"NoErrorEdgeWithoutFailure": {reason: "An api transfer that does not validate never takes its error edge.",
			def:  def("start", Transfer{Source: "start", Target: "up", Trigger: TriggerAPI, Error: "rejected"}),
			want: map[string]tuples{"start": tup(c), "up": tup(c)}},
		"InapplicableEdgeNotTaken": {reason: "A rollback with no rollback set fails: the order stays.",
			def:  def("start", Transfer{Source: "start", Target: "back", Trigger: TriggerAPI, TargetOperation: OpRollback}),
			want: map[string]tuples{"start": tup(c)}},
		"Rollback": {reason: "Rollback after an update's promote restores the old active set, the newer one as candidate.",
			def: def("start",
				Transfer{Source: "start", Target: "up", Trigger: TriggerAuto, TargetOperation: OpPromote},
				Transfer{Source: "up", Target: "up", Trigger: TriggerOnUpdate, TargetOperation: OpPromote},
				Transfer{Source: "up", Target: "back", Trigger: TriggerAPI, TargetOperation: OpRollback}),
			want: map[string]tuples{"start": tup(c), "up": tup(a, a|r), "back": tup(c | a)}},
		"Loop": {reason: "Cycles reach a fixed point.",
			def: def("a",
				Transfer{Source: "a", Target: "b", Trigger: TriggerAPI, TargetOperation: OpPromote},
				Transfer{Source: "b", Target: "a", Trigger: TriggerOnUpdate}),
			want: map[string]tuples{"a": tup(c, c|a, c|a|r), "b": tup(a, a|r)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := reachableSets(tc.def)
			for state, v := range got {
				if v == 0 {
					delete(got, state)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCheckOperations(t *testing.T) {
	t.Parallel()
	first := Transfer{Source: "start", Target: "up", Trigger: TriggerAuto, TargetOperation: OpPromote}
	cases := map[string]struct {
		reason string
		def    Definition
		want   []invalid.Field
	}{
		"PromoteNew": {reason: "A new order's candidate can be promoted.", def: def("start", first)},
		"PromoteTwice": {reason: "After a promote, another promote has no candidate.",
			def: def("start", first, Transfer{Source: "up", Target: "up", Trigger: TriggerAPI, TargetOperation: OpPromote}),
			want: []invalid.Field{{Field: "transfers[1].target_operation",
				Message: `promote needs a candidate set, and an order in state "up" never has one here`}}},
		"PromoteOnUpdate": {reason: "An on_update transfer brings the candidate it promotes.",
			def: def("start", first, Transfer{Source: "up", Target: "up", Trigger: TriggerOnUpdate, TargetOperation: OpPromote})},
		"PromoteSometimes": {reason: "One value with a candidate is enough: the analysis refuses only what never applies.",
			def: def("start", first,
				Transfer{Source: "up", Target: "updating", Trigger: TriggerOnUpdate},
				Transfer{Source: "updating", Target: "up", Trigger: TriggerResource},
				Transfer{Source: "up", Target: "up", Trigger: TriggerAPI, TargetOperation: OpPromote})},
		"RollbackAfterClear": {reason: "clear rollback leaves nothing to roll back to.",
			def: def("start", first,
				Transfer{Source: "up", Target: "up", Trigger: TriggerOnUpdate, TargetOperation: OpPromote},
				Transfer{Source: "up", Target: "cleared", Trigger: TriggerAPI, TargetOperation: OpClearRollback},
				Transfer{Source: "cleared", Target: "up", Trigger: TriggerAPI, TargetOperation: OpRollback}),
			want: []invalid.Field{{Field: "transfers[3].target_operation",
				Message: `rollback needs a rollback set, and an order in state "cleared" never has one here`}}},
		"ErrorOperation": {reason: "A validation failure's edge is checked too.",
			def: def("start", Transfer{Source: "start", Target: "up", Trigger: TriggerAuto, Validate: true,
				Error: "rejected", ErrorOperation: OpRollback}),
			want: []invalid.Field{{Field: "transfers[0].error_operation",
				Message: `rollback needs a rollback set, and an order in state "start" never has one here`}}},
		"UnreachedSourceNotBlamed": {reason: "A state reached only through a failing edge is the edge's fault, reported once.",
			def: def("start", first,
				Transfer{Source: "up", Target: "after", Trigger: TriggerAPI, TargetOperation: OpRollback},
				Transfer{Source: "after", Target: "up", Trigger: TriggerAPI, TargetOperation: OpPromote}),
			want: []invalid.Field{{Field: "transfers[1].target_operation",
				Message: `rollback needs a rollback set, and an order in state "up" never has one here`}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, checkOperations(tc.def)); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
