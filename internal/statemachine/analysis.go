package statemachine

import (
	"fmt"
	"math/bits"

	"github.com/stewardhq/steward/internal/invalid"
)

// sets is the abstract value of an order's attribute sets: which of the
// three are non-empty.
type sets uint8

const (
	hasCandidate sets = 1 << iota
	hasActive
	hasRollback
)

// newOrder is what an order holds when it enters the initial state: the
// posted attributes as its candidate set.
const newOrder = hasCandidate

// tuples is a set of [sets] values, one bit per value (there are eight).
type tuples uint8

func (t tuples) has(s sets) bool { return t&(1<<s) != 0 }

func (t tuples) with(s sets) tuples { return t | 1<<s }

// each calls f for every value in t.
func (t tuples) each(f func(sets)) {
	for rest := t; rest != 0; rest &= rest - 1 {
		f(sets(bits.TrailingZeros8(uint8(rest))))
	}
}

// applyAbstract is [ApplyOperation] on abstract values: false when the
// operation cannot apply (promote without a candidate set, rollback
// without a rollback set).
func applyAbstract(op Operation, s sets) (sets, bool) {
	switch op {
	case OpPromote:
		if s&hasCandidate == 0 {
			return 0, false
		}
		out := hasActive
		if s&hasActive != 0 {
			out |= hasRollback
		}
		return out, true
	case OpRollback:
		if s&hasRollback == 0 {
			return 0, false
		}
		out := hasActive
		if s&hasActive != 0 {
			out |= hasCandidate
		}
		return out, true
	case OpClearCandidate:
		return s &^ hasCandidate, true
	case OpClearActive:
		return s &^ hasActive, true
	case OpClearRollback:
		return s &^ hasRollback, true
	}
	return s, true
}

// entering returns what an order holds when t fires in a state where it
// holds s: an update (on_update) first stores the new attributes as the
// candidate set, before the transfer's operation applies.
func entering(t Transfer, s sets) sets {
	if t.Trigger == TriggerOnUpdate {
		return s | hasCandidate
	}
	return s
}

// reachableSets runs the dataflow analysis: for each state, every abstract
// value an order can hold in it. A new order starts in the initial state
// with a candidate set only; a transfer's target edge applies its
// target_operation, its error edge (validating and resource transfers
// only) its error_operation, and an edge whose operation cannot apply is
// not taken. The values per state only grow and are finitely many, so the
// worklist reaches a fixed point. d must be normalized (resource transfers
// carry their error state).
func reachableSets(d Definition) map[string]tuples {
	from := d.bySource()
	reach := map[string]tuples{d.InitialState: tuples(0).with(newOrder)}
	work := []string{d.InitialState}
	add := func(state string, s sets) {
		if !reach[state].has(s) {
			reach[state] = reach[state].with(s)
			work = append(work, state)
		}
	}
	for len(work) > 0 {
		state := work[len(work)-1]
		work = work[:len(work)-1]
		reach[state].each(func(s sets) {
			for _, i := range from[state] {
				t := d.Transfers[i]
				in := entering(t, s)
				if out, ok := applyAbstract(t.TargetOperation, in); ok {
					add(t.Target, out)
				}
				if t.Error != "" && (t.Validate || t.Trigger == TriggerResource) {
					if out, ok := applyAbstract(t.ErrorOperation, in); ok {
						add(t.Error, out)
					}
				}
			}
		})
	}
	return reach
}

// checkOperations names each promote or rollback that can never apply: a
// promote on an edge whose source state, in every value [reachableSets]
// finds for it, has no candidate set (after an update's new attributes),
// and likewise a rollback without a rollback set. A source state with no
// values at all is only reached through such an edge, which is reported
// itself. d must be normalized.
func checkOperations(d Definition) []invalid.Field {
	reach := reachableSets(d)
	var out []invalid.Field
	for i, t := range d.Transfers {
		for _, edge := range []struct {
			field string
			op    Operation
		}{{"target_operation", t.TargetOperation}, {"error_operation", t.ErrorOperation}} {
			if edge.op != OpPromote && edge.op != OpRollback {
				continue
			}
			applies, seen := false, false
			reach[t.Source].each(func(s sets) {
				seen = true
				if _, ok := applyAbstract(edge.op, entering(t, s)); ok {
					applies = true
				}
			})
			if seen && !applies {
				set := "candidate"
				if edge.op == OpRollback {
					set = "rollback"
				}
				out = append(out, invalid.Field{
					Field: fmt.Sprintf("transfers[%d].%s", i, edge.field),
					Message: fmt.Sprintf("%s needs a %s set, and an order in state %q never has one here",
						edge.op, set, t.Source),
				})
			}
		}
	}
	return out
}
