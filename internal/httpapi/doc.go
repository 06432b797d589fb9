// Package httpapi holds Steward's HTTP conventions (API.md, Conventions) so
// that every domain's handlers get them the same way: routing with AEP custom
// methods (`/things/{id}:verb`), RFC 9457 problem+json errors with a stable
// reason from one error table, request ids, access logs, Prometheus metrics,
// OpenTelemetry spans, authentication, a 1 MiB body limit, request validation
// against the OpenAPI document, keyset pagination, ETag/If-Match and the
// Idempotency-Key middleware.
//
// A domain registers handlers of type [HandlerFunc], which return an error
// instead of writing one; [API] turns the error into a problem through the
// [Problems] table that internal/server builds. Domains thus never choose a
// status code or a reason for an error: the table does, in one place.
package httpapi
