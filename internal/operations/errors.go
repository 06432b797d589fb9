package operations

import "errors"

var (
	// ErrNotFound is returned when no operation has the id in the caller's project.
	ErrNotFound = errors.New("operation not found")
	// ErrAlreadyDone is returned by FinishTx for an operation that is already done.
	ErrAlreadyDone = errors.New("operation is already done")
)
