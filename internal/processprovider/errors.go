package processprovider

import (
	"errors"
	"net/http"

	"github.com/stewardhq/steward/internal/invalid"
)

// ErrStopped is returned by [Provider.Create], [Provider.Update],
// [Provider.Delete] and [Provider.Health] once [Provider.Stop] has been
// called: the provider no longer supervises anything.
var ErrStopped = errors.New("processprovider: provider stopped")

// ErrDeleting is returned (wrapped, answering HTTP 409 CONFLICT) by
// [Provider.Update] for an instance being deleted: there is nothing left to
// update.
var ErrDeleting = errors.New("processprovider: instance is being deleted")

// ErrRepairInProgress is returned (wrapped, answering HTTP 409 with reason
// REPAIR_IN_PROGRESS) by [Provider.Repair] for a new operation while another
// runs on the same instance.
var ErrRepairInProgress = errors.New("processprovider: another repair operation is running on the instance")

// conflictError gives its error the HTTP status 409, keeping it for errors.Is.
type conflictError struct {
	error
	// reason is the problem's reason; empty for the default, CONFLICT.
	reason string
}

// HTTPStatus is 409 Conflict: the instance's state forbids the request.
func (e conflictError) HTTPStatus() int { return http.StatusConflict }

// ProblemReason is the problem's reason, for the SDK server.
func (e conflictError) ProblemReason() string { return e.reason }

// Unwrap returns the error.
func (e conflictError) Unwrap() error { return e.error }

// RequestError is returned by [Provider.Create] and [Provider.Update] when
// it refuses a request: an instance id that cannot name a work directory, or
// a spec field that is missing or malformed. It answers HTTP 400 through
// HTTPStatus, and unwraps to the [invalid.Error] that names each bad field
// (for example "spec.process.command"), so Steward's problem table maps it
// to INVALID_ARGUMENT when the provider runs in-process.
type RequestError struct {
	Invalid *invalid.Error
}

// Error lists the refused fields.
func (e *RequestError) Error() string { return "processprovider: " + e.Invalid.Error() }

// HTTPStatus is 400 Bad Request: the request, not the provider, is at fault.
func (e *RequestError) HTTPStatus() int { return 400 }

// Unwrap returns the field list as an [invalid.Error].
func (e *RequestError) Unwrap() error { return e.Invalid }

// ProblemFields adds the refused fields to a problem+json body.
func (e *RequestError) ProblemFields() map[string]any { return e.Invalid.ProblemFields() }

// ErrRunsAsRoot refuses to start a provider as root: the processes it runs
// are its orders', and would run as root too.
var ErrRunsAsRoot = errors.New("processprovider: refusing to run processes as root: run the provider as an " +
	"unprivileged user, or pass --allow-root")
