package placement

import "errors"

// ErrResourceNotFound is returned when no resource has the instance id (in
// the caller's project).
var ErrResourceNotFound = errors.New("resource not found")

// ErrRehydrationInProgress is returned when a rehydration of the same order
// is already running.
var ErrRehydrationInProgress = errors.New("a rehydration of this order is already running")

// ErrResourceExists is returned when a rehydration's new instance id is
// already taken.
var ErrResourceExists = errors.New("a resource with this instance id already exists")

// ErrOrderGone is returned by an [OrderRepointer] when the order no longer
// points at the rehydrated resource (it was deleted meanwhile).
var ErrOrderGone = errors.New("the order no longer points at the rehydrated resource")
