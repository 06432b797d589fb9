package order

// Attributes are an order's three attribute sets (LSM's candidate, active
// and rollback) and the active set as asked. A nil map is an empty set
// (JSON null); an empty non-nil map is a set that holds no attribute.
//
// The active set is what runs: once realised, the spec the policy chain
// made of the request (patches applied), the provider's validated_request.
// Requested is the same set as the user asked for it, before the policy
// chain; the candidate and rollback sets are sets as asked too, so that
// the chain runs afresh on them when they are realised (an update, a
// rollback, a rehydration). The lifecycle's transfers move them
// (statemachine.ApplyOperation).
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

// Sets returns the sets that are there (candidate, active, rollback,
// requested), leaving out the nil ones.
func (a Attributes) Sets() []map[string]any {
	var out []map[string]any
	for _, set := range []map[string]any{a.Candidate, a.Active, a.Rollback, a.Requested} {
		if set != nil {
			out = append(out, set)
		}
	}
	return out
}
