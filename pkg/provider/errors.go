package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// Errors of the calls this package makes ([Client], [Registrar],
// [HTTPReporter]). [ErrNotFound] is in provider.go with the contract.
var (
	// ErrTimeout is returned (wrapped) when a call's deadline passed before
	// the whole answer arrived: the per-call timeout or the caller's ctx
	// deadline. The outcome is unknown: the other side may have acted.
	ErrTimeout = errors.New("provider: call timed out")
	// ErrUnreachable is returned (wrapped) when the call failed at the
	// transport: connection refused or reset, DNS failure, a connection
	// closed before the answer, a TLS failure. The outcome is unknown: a
	// connection may break after the other side read the request.
	ErrUnreachable = errors.New("provider: unreachable")
	// ErrInvalidResponse is returned (wrapped) when a 2xx answer cannot be
	// used: not JSON, larger than 1 MiB, or breaking the contract (another
	// instance id, an unknown status, no provider id). The other side did
	// act, so for Create the instance's state is unknown: ask with Get.
	ErrInvalidResponse = errors.New("provider: invalid response")
	// ErrUnknownInstance is returned (wrapped) by [HTTPReporter] when
	// Steward answers 404: it holds no service-type instance with that id.
	ErrUnknownInstance = errors.New("provider: steward does not know the instance")
	// ErrInvalidReport is returned (wrapped) by a [StatusReporter] for a
	// report it will not send: no instance id, or an unknown status.
	ErrInvalidReport = errors.New("provider: invalid status report")
)

// maxBody caps request bodies the server reads and answers the client reads
// (API.md: bodies over 1 MiB → 413).
const maxBody = 1 << 20

// ResponseError is returned (wrapped) when the other side answered with a
// status outside 2xx: it received the request and refused it, or failed (5xx)
// while handling it. A 3xx is a ResponseError too: redirects are never
// followed. For the same instance, Steward may retry a 5xx, since every
// [Provider] method is idempotent.
type ResponseError struct {
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Body is the answer's body, at most its first 1 MiB; usually a
	// problem+json document (see [ResponseError.Problem]).
	Body []byte

	// retryAfter is the answer's Retry-After in seconds, if any.
	retryAfter time.Duration
	// bodyUnsaid keeps a body that is no contract problem out of Error:
	// set on the errors of [Client], whose answers come from whatever
	// server an endpoint names.
	bodyUnsaid bool
}

// Error says the status and the problem's detail, or the start of the body.
// The error of a [Client] call says a problem's detail only when the body
// is a problem of the contract (its reason a stable UPPER_SNAKE code, as
// [NewServer] writes them), and the status alone otherwise: its caller
// (Steward) puts errors where users read them (a cleanup task's last
// error, logs), and the body may be anything the endpoint's server
// answers, an internal service's secrets included. Body still holds it.
func (e *ResponseError) Error() string {
	msg := fmt.Sprintf("answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.bodyUnsaid {
		if p, ok := e.Problem(); ok && p.Detail != "" && reasonCode.MatchString(p.Reason) {
			return msg + ": " + truncate(p.Detail)
		}
		return msg
	}
	if p, ok := e.Problem(); ok && p.Detail != "" {
		return msg + ": " + p.Detail
	}
	if body := strings.TrimSpace(string(e.Body)); body != "" {
		return msg + ": " + truncate(body)
	}
	return msg
}

// reasonCode is the form of a problem's reason.
var reasonCode = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

// truncate keeps the first 200 bytes of s.
func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// Problem decodes the body as a problem+json document; ok is false when it
// is not one (no status and no reason).
func (e *ResponseError) Problem() (p Problem, ok bool) {
	if err := json.Unmarshal(e.Body, &p); err != nil {
		return Problem{}, false
	}
	return p, p.Status != 0 || p.Reason != ""
}

// Problem is an RFC 9457 problem detail, as [NewServer] writes every error
// and Steward answers its own (API.md, Conventions).
type Problem struct {
	Type   string `json:"type,omitempty"`
	Title  string `json:"title,omitempty"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Reason is a stable UPPER_SNAKE code, such as INSTANCE_NOT_FOUND.
	Reason string `json:"reason"`
}

// HTTPError is an error a [Provider] returns to choose the answer: the
// server answers Code with Reason and Message as the problem's reason and
// detail. Use it for refusals (4xx: a spec the provider cannot realise, no
// capacity left); any error with a method HTTPStatus() int works as well.
type HTTPError struct {
	// Code is the HTTP status, 400 to 599; others answer 500.
	Code int
	// Reason is a stable UPPER_SNAKE code. Defaults to the status text
	// ("CONFLICT" for 409).
	Reason string
	// Message is the detail, for a person.
	Message string
}

// Error returns the message.
func (e *HTTPError) Error() string { return e.Message }

// HTTPStatus returns the status the server answers.
func (e *HTTPError) HTTPStatus() int { return e.Code }

// ProblemReason returns the problem's reason; the server also reads it from
// any error that has this method.
func (e *HTTPError) ProblemReason() string { return e.Reason }
