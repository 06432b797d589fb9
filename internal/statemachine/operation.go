package statemachine

import (
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/order"
)

// ErrOperationNotApplicable is returned by [ApplyOperation] for a
// promote without a candidate set or a rollback without a rollback set.
var ErrOperationNotApplicable = errors.New("operation cannot apply to the attribute sets")

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
func ApplyOperation(op Operation, sets order.Attributes) (order.Attributes, error) {
	switch op {
	case "":
		return sets, nil
	case OpPromote:
		if sets.Candidate == nil {
			return order.Attributes{}, fmt.Errorf("promote: %w: there is no candidate set", ErrOperationNotApplicable)
		}
		return order.Attributes{Active: sets.Candidate, Requested: sets.Candidate, Rollback: sets.Asked()}, nil
	case OpRollback:
		if sets.Rollback == nil {
			return order.Attributes{}, fmt.Errorf("rollback: %w: there is no rollback set", ErrOperationNotApplicable)
		}
		return order.Attributes{Candidate: sets.Asked(), Active: sets.Rollback, Requested: sets.Rollback}, nil
	case OpClearCandidate:
		sets.Candidate = nil
	case OpClearActive:
		sets.Active, sets.Requested = nil, nil
	case OpClearRollback:
		sets.Rollback = nil
	default:
		return order.Attributes{}, fmt.Errorf("unknown operation %q", op)
	}
	return sets, nil
}
