package lifecycle

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrLifecycleNotFound is returned when no lifecycle, stored or
	// built in, has the id. It is wrapped with the id: test for it with
	// [errors.Is].
	ErrLifecycleNotFound = errors.New("lifecycle not found")
	// ErrLifecycleExists is returned by [Service.Create] when the id is
	// taken, by a stored or a built-in lifecycle.
	ErrLifecycleExists = errors.New("a lifecycle with this id already exists")
	// ErrLifecycleReadOnly is returned by [Service.Replace] and
	// [Service.Delete] for a built-in lifecycle.
	ErrLifecycleReadOnly = errors.New("built-in lifecycles are read-only")
	// ErrLifecycleInUse is returned by [Service.Delete] while service types
	// use the lifecycle, as an [*InUseError].
	ErrLifecycleInUse = errors.New("lifecycle is used by service types")
)

// InUseError is [ErrLifecycleInUse] with the service types that use the
// lifecycle.
type InUseError struct {
	LifecycleID  string
	ServiceTypes []string
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("lifecycle %q is used by service type(s) %s", e.LifecycleID, strings.Join(e.ServiceTypes, ", "))
}

// Unwrap makes errors.Is(err, ErrLifecycleInUse) true.
func (e *InUseError) Unwrap() error { return ErrLifecycleInUse }

// ProblemFields names the lifecycle and the service types.
func (e *InUseError) ProblemFields() map[string]any {
	return map[string]any{"lifecycle_id": e.LifecycleID, "service_types": e.ServiceTypes}
}
