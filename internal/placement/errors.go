package placement

import (
	"context"
	"errors"
)

// ErrResourceNotFound is returned when no resource has the instance id (in
// the caller's project).
var ErrResourceNotFound = errors.New("resource not found")

// ErrRehydrationInProgress is returned when a rehydration of the same order
// is already running.
var ErrRehydrationInProgress = errors.New("a rehydration of this order is already running")

// ErrResourceExists is returned when a rehydration's new instance id is
// already taken.
var ErrResourceExists = errors.New("a resource with this instance id already exists")

// ErrOrderGone ends a rehydration whose order no longer points at the
// rehydrated resource (it was deleted meanwhile): the new resource is
// deleted and the operation fails with it.
var ErrOrderGone = errors.New("the order no longer points at the rehydrated resource")

// ErrCopyFailed fails a rehydration whose data could not be copied to the
// new instance: the old one serves on, and takes writes again.
var ErrCopyFailed = errors.New("the data was not copied to the new instance; the order stays on the old one")

// ErrNewInstanceFailed fails a rehydration whose new instance was created
// but did not come to run (it failed, went, or outlasted the wait): it is
// deleted, and the order stays on the old one.
var ErrNewInstanceFailed = errors.New("the new instance did not run; the order stays on the old one")

// ErrPolicyBrokeSpec is returned by Place when the policy chain's patches
// leave a spec its service type's schema refuses.
var ErrPolicyBrokeSpec = errors.New("the policy chain's changes make the spec invalid for its service type")

// SpecBrokenError is ErrPolicyBrokeSpec with the schema's complaint.
type SpecBrokenError struct{ Err error }

func (e *SpecBrokenError) Error() string { return ErrPolicyBrokeSpec.Error() + ": " + e.Err.Error() }

// Unwrap makes errors.Is(err, ErrPolicyBrokeSpec) true.
func (e *SpecBrokenError) Unwrap() error { return ErrPolicyBrokeSpec }

// ProblemFields names the fields the schema refused.
func (e *SpecBrokenError) ProblemFields() map[string]any {
	var f interface{ ProblemFields() map[string]any }
	if errors.As(e.Err, &f) {
		return f.ProblemFields()
	}
	return nil
}

// specValidator checks a spec against its service type (catalog).
type specValidator interface {
	ValidateSpec(ctx context.Context, serviceType string, spec map[string]any) error
}
