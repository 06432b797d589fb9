package sprm

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/stewardhq/steward/pkg/provider"
)

var (
	// ErrProviderNotFound is returned when no provider has the name or id.
	ErrProviderNotFound = errors.New("provider not found")
	// ErrProviderIDConflict is returned when a registration's name is held
	// under another id, or its id by another name.
	ErrProviderIDConflict = errors.New("provider name and id conflict with an existing registration")
	// ErrProviderInUse is returned when deregistering a provider that still
	// owns live instances.
	ErrProviderInUse = errors.New("provider still owns live instances")
	// ErrProviderUnavailable is returned when creating on a provider that is
	// degraded or unavailable.
	ErrProviderUnavailable = errors.New("provider is not healthy")
	// ErrInstanceNotFound is returned when no instance has the id.
	ErrInstanceNotFound = errors.New("service-type instance not found")
	// ErrInstanceExists is returned when a create's id is taken.
	ErrInstanceExists = errors.New("a service-type instance with this id already exists")
	// ErrUpdateNotSupported is returned by [Service.Update] when the
	// instance's provider did not register the update operation: the
	// update must be realised by replacement.
	ErrUpdateNotSupported = errors.New("provider does not update instances in place")
	// ErrCleanupTaskNotFound is returned when no cleanup task has the id.
	ErrCleanupTaskNotFound = errors.New("cleanup task not found")
	// ErrCleanupTaskNotFailed is returned when retrying a task that is not FAILED.
	ErrCleanupTaskNotFailed = errors.New("only a FAILED cleanup task can be retried")
	// ErrStaleReport is returned by ApplyStatus for a report older than the
	// last one applied; it is ignored.
	ErrStaleReport = errors.New("status report is older than the last one applied")
)

// ProviderError is a provider's refusal of a create: its HTTP status and
// body are forwarded to the caller (seed: "forward the SP's error response").
type ProviderError struct {
	Provider   string
	StatusCode int
	Body       []byte
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("provider %q refused the request with HTTP %d", e.Provider, e.StatusCode)
}

// HTTPStatus is the status the problem answers with: the provider's own.
func (e *ProviderError) HTTPStatus() int { return e.StatusCode }

// ProblemFields carries the provider's body as provider_response.
func (e *ProviderError) ProblemFields() map[string]any {
	return map[string]any{"provider_name": e.Provider, "provider_response": providerBody(e.Body)}
}

// refusal is the error of a provider's 4xx answer to a create or update:
// its refusal forwarded, except a 401. That one is not the request's fault:
// the provider holds another call token than the one registered, as it
// does between a restart and its registration, and nothing was done, so
// the call may be tried again (ErrProviderUnavailable).
func refusal(prov Provider, refused *provider.ResponseError) error {
	if refused.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("%w: %q did not accept Steward's call token (it may be registering again)",
			ErrProviderUnavailable, prov.Name)
	}
	return &ProviderError{Provider: prov.Name, StatusCode: refused.StatusCode, Body: refused.Body}
}

// OutcomeUnknownError is returned when a create's outcome on the provider
// cannot be known (timeout, lost connection) or could not be recorded. The
// instance was queued for cleanup, so nothing stays orphaned.
type OutcomeUnknownError struct {
	InstanceID string
	// Kind is ErrProviderTimeout, ErrProviderUnreachable or ErrRecordFailed.
	Kind error
	Err  error
	// Resolvable is set for a create with [CreateParams.Resume]: nothing
	// was queued for cleanup, and the next attempt resolves the outcome
	// (or [Service.Abandon] gives it up).
	Resolvable bool
}

// The kinds of OutcomeUnknownError.
var (
	ErrProviderTimeout     = errors.New("the provider did not answer in time")
	ErrProviderUnreachable = errors.New("the provider could not be reached")
	ErrRecordFailed        = errors.New("the provider created the instance but Steward could not record it")
)

func (e *OutcomeUnknownError) Error() string {
	next := "queued for cleanup"
	if e.Resolvable {
		next = "to be resolved by the next attempt"
	}
	return fmt.Sprintf("instance %s: %v (%s): %v", e.InstanceID, e.Kind, next, e.Err)
}

// Unwrap exposes the kind for errors.Is.
func (e *OutcomeUnknownError) Unwrap() []error { return []error{e.Kind, e.Err} }

// ProblemFields names the instance, so the caller can follow it.
func (e *OutcomeUnknownError) ProblemFields() map[string]any {
	return map[string]any{"instance_id": e.InstanceID}
}

// providerBody returns a provider's body as JSON if it is JSON, else as text.
func providerBody(b []byte) any {
	var v any
	if err := jsonUnmarshal(b, &v); err == nil {
		return v
	}
	return string(b)
}
