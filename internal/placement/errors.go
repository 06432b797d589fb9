package placement

import "errors"

// ErrResourceNotFound is returned when no resource has the instance id (in
// the caller's project).
var ErrResourceNotFound = errors.New("resource not found")
