package httpapi

import (
	"errors"
	"net/http"
)

// Errors of the HTTP layer itself. internal/server puts them in the problem
// table with [BaseProblems], so their reasons are API like any domain's.
var (
	// ErrRouteNotFound is returned when no route serves the path.
	ErrRouteNotFound = errors.New("no resource at this path")
	// ErrMethodNotAllowed is returned when the path exists but not for the method.
	ErrMethodNotAllowed = errors.New("method not allowed on this path")
	// ErrBodyTooLarge is returned when a request body exceeds the limit (1 MiB).
	ErrBodyTooLarge = errors.New("request body is larger than 1 MiB")
	// ErrMalformedJSON is returned when a body is not valid JSON.
	ErrMalformedJSON = errors.New("request body is not valid JSON")
	// ErrUnsupportedMediaType is returned for a body that is not application/json.
	ErrUnsupportedMediaType = errors.New("request body must be application/json")
	// ErrPreconditionFailed is returned when If-Match does not match the resource's etag.
	ErrPreconditionFailed = errors.New("the resource changed: If-Match does not match its etag")
	// ErrIdempotencyKeyReused is returned when a key is replayed with another request.
	ErrIdempotencyKeyReused = errors.New("the Idempotency-Key was used with a different request")
	// ErrIdempotencyKeyInUse is returned while the first request with a key is in flight.
	ErrIdempotencyKeyInUse = errors.New("a request with this Idempotency-Key is still in flight")
	// ErrInvalidPageToken is returned for a page_token the server did not issue.
	ErrInvalidPageToken = errors.New("page_token is not one this list issued")
)

// BaseProblems maps the HTTP layer's own errors. internal/server appends the
// domains' mappings to it.
func BaseProblems() Problems {
	return Problems{
		{Err: ErrRouteNotFound, Status: http.StatusNotFound, Reason: "NOT_FOUND", Title: "Not found"},
		{Err: ErrMethodNotAllowed, Status: http.StatusMethodNotAllowed, Reason: "METHOD_NOT_ALLOWED", Title: "Method not allowed"},
		{Err: ErrBodyTooLarge, Status: http.StatusRequestEntityTooLarge, Reason: "BODY_TOO_LARGE", Title: "Request body too large"},
		{Err: ErrMalformedJSON, Status: http.StatusBadRequest, Reason: "MALFORMED_JSON", Title: "Malformed JSON"},
		{Err: ErrUnsupportedMediaType, Status: http.StatusUnsupportedMediaType, Reason: "UNSUPPORTED_MEDIA_TYPE", Title: "Unsupported media type"},
		{Err: ErrPreconditionFailed, Status: http.StatusPreconditionFailed, Reason: "PRECONDITION_FAILED", Title: "Precondition failed"},
		{Err: ErrIdempotencyKeyReused, Status: http.StatusUnprocessableEntity, Reason: "IDEMPOTENCY_KEY_REUSED", Title: "Idempotency key reused"},
		{Err: ErrIdempotencyKeyInUse, Status: http.StatusConflict, Reason: "IDEMPOTENCY_KEY_IN_USE", Title: "Idempotency key in use"},
		{Err: ErrInvalidPageToken, Status: http.StatusBadRequest, Reason: "INVALID_PAGE_TOKEN", Title: "Invalid page token"},
	}
}
