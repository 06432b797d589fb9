package statemachine

import (
	"errors"
	"fmt"
)

// ErrOperationNotApplicable is returned by [ApplyOperation] for a
// promote without a candidate set or a rollback without a rollback set.
var ErrOperationNotApplicable = errors.New("operation cannot apply to the attribute sets")

// Attributes are an order's three attribute sets (LSM's candidate, active
// and rollback) and the active set as asked. A nil map is an empty set
// (JSON null); an empty non-nil map is a set that holds no attribute.
//
// The active set is what runs: once realised, the spec the policy chain
// made of the request (patches applied), the provider's validated_request.
// Requested is the same set as the user asked for it, before the policy
// chain; the candidate and rollback sets are sets as asked too, so that
// the chain runs afresh on them when they are realised (an update, a
// rollback, a rehydration).
type Attributes struct {
	Candidate map[string]any `json:"candidate"`
	Active    map[string]any `json:"active"`
	Rollback  map[string]any `json:"rollback"`
	Requested map[string]any `json:"requested"`
}

// Asked returns the active set as asked: Requested, or, for an order
// stored before it was kept, the active set.
func (a Attributes) Asked() map[string]any {
	if a.Requested != nil {
		return a.Requested
	}
	return a.Active
}

// ApplyOperation returns sets after op: promote moves candidate to active
// (and to requested) and the active set as asked to rollback (the
// candidate set is then empty); rollback moves rollback to active (and to
// requested) and the active set as asked to candidate (the rollback set is
// then empty); clear candidate, clear active (with requested) and clear
// rollback empty one set;
// "" changes nothing. It is pure: sets is not modified, though the result
// shares its maps. A promote without a candidate set or a rollback without
// a rollback set is an error wrapping [ErrOperationNotApplicable]; an
// unknown op is an error too.
func ApplyOperation(op Operation, sets Attributes) (Attributes, error) {
	switch op {
	case "":
		return sets, nil
	case OpPromote:
		if sets.Candidate == nil {
			return Attributes{}, fmt.Errorf("promote: %w: there is no candidate set", ErrOperationNotApplicable)
		}
		return Attributes{Active: sets.Candidate, Requested: sets.Candidate, Rollback: sets.Asked()}, nil
	case OpRollback:
		if sets.Rollback == nil {
			return Attributes{}, fmt.Errorf("rollback: %w: there is no rollback set", ErrOperationNotApplicable)
		}
		return Attributes{Candidate: sets.Asked(), Active: sets.Rollback, Requested: sets.Rollback}, nil
	case OpClearCandidate:
		sets.Candidate = nil
	case OpClearActive:
		sets.Active, sets.Requested = nil, nil
	case OpClearRollback:
		sets.Rollback = nil
	default:
		return Attributes{}, fmt.Errorf("unknown operation %q", op)
	}
	return sets, nil
}
