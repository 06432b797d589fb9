package lifecycle

import "fmt"

// Attributes are an order's three attribute sets (LSM's candidate, active
// and rollback). A nil map is an empty set (JSON null); an empty non-nil
// map is a set that holds no attribute.
type Attributes struct {
	Candidate map[string]any `json:"candidate"`
	Active    map[string]any `json:"active"`
	Rollback  map[string]any `json:"rollback"`
}

// ApplyOperation returns sets after op: promote moves candidate to active
// and active to rollback (the candidate set is then empty); rollback moves
// rollback to active and active to candidate (the rollback set is then
// empty); clear candidate, clear active and clear rollback empty one set;
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
		return Attributes{Active: sets.Candidate, Rollback: sets.Active}, nil
	case OpRollback:
		if sets.Rollback == nil {
			return Attributes{}, fmt.Errorf("rollback: %w: there is no rollback set", ErrOperationNotApplicable)
		}
		return Attributes{Candidate: sets.Active, Active: sets.Rollback}, nil
	case OpClearCandidate:
		sets.Candidate = nil
	case OpClearActive:
		sets.Active = nil
	case OpClearRollback:
		sets.Rollback = nil
	default:
		return Attributes{}, fmt.Errorf("unknown operation %q", op)
	}
	return sets, nil
}
