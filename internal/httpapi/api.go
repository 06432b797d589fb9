package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/invalid"
)

// HandlerFunc serves a request and returns the error to answer with, if any.
// A handler that returns an error must not have written to w.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Config configures an API. Logger, Problems and Auth are required.
type Config struct {
	Logger *slog.Logger
	// RequestLogLevel is the level of the line logged per request (the
	// access log). Defaults to info, the zero Level.
	RequestLogLevel slog.Level
	Problems        Problems
	Auth            auth.Authenticator
	// Spec, when set, validates every request to a route it documents
	// (parameters and bodies) before the handler runs.
	Spec *openapi3.T
	// Idempotency, when set, makes every POST honour the Idempotency-Key header.
	Idempotency *IdempotencyStore
	// Registerer receives the request metrics. Defaults to none.
	Registerer prometheus.Registerer
	// Tracer, when set, records a span per request. Defaults to none.
	Tracer trace.Tracer
	// MaxBodyBytes limits request bodies. Defaults to 1 MiB.
	MaxBodyBytes int64
	// Audit, when set, records every mutating request.
	Audit Auditor
	// AuthFailures limits failed authentications per presented credential
	// and per client address. Defaults to 20 at once, refilled at one a
	// second.
	AuthFailures *FailureLimiter
	// PageKey signs page tokens (ParsePage), at least 32 bytes. Replicas
	// serving one client's pages in turn must share it: internal/server
	// reads it from the database ([LoadPageKey]). Defaults to a random key
	// of this API alone.
	PageKey []byte
	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// (for the failure limits and the access log). Defaults to none: the
	// client is the peer and the header is ignored.
	TrustedProxies []netip.Prefix
}

// API is Steward's HTTP handler: the routes of every domain behind the shared
// conventions. It is safe for concurrent use once routes are registered.
type API struct {
	cfg       Config
	mux       *http.ServeMux
	metrics   *metrics
	validator *validator
	// undocumented are the patterns registered with Handle that the OpenAPI
	// document does not describe (requests to them pass unvalidated).
	undocumented []string
	// auditNames overrides the audit action and target named after the
	// route (AuditAs); written before serving, read-only after.
	auditNames map[string]auditName
	// allProjects are the list routes that take ProjectHeader
	// auth.AllProjects from an admin (ListsAllProjects).
	allProjects map[string]bool
	// handlers are the registered handlers by pattern, for the reads
	// checkImmutable makes; written before serving, read-only after.
	handlers map[string]HandlerFunc
}

// ListsAllProjects lets an admin send `Steward-Project: *` to the list
// route pattern, which then lists the rows of every project: the domain
// reads auth.AllProjects as its project. Call it before the API serves.
func (a *API) ListsAllProjects(pattern string) {
	if a.allProjects == nil {
		a.allProjects = map[string]bool{}
	}
	a.allProjects[pattern] = true
}

// auditName is an audit action and target a route is recorded under.
type auditName struct{ action, kind, param string }

// AuditAs records requests to pattern under action, on the target
// kind:{param}, instead of the names derived from the route: for the
// actions a specification names (the repair seed's
// app_instance.repair.requested on app_instance:{id}). A read route named
// here is recorded too, as the reads that disclose a secret must be. Call
// it before the API serves.
func (a *API) AuditAs(pattern, action, kind, param string) {
	if a.auditNames == nil {
		a.auditNames = map[string]auditName{}
	}
	a.auditNames[pattern] = auditName{action: action, kind: kind, param: param}
}

// auditEntry names a request for the audit log, as AuditAs or the route says.
func (a *API) auditEntry(r *http.Request, pattern string) AuditEntry {
	e := auditEntry(r, pattern)
	if n, ok := a.auditNames[pattern]; ok {
		e.Action, e.Target = n.action, n.kind+":"+r.PathValue(n.param)
	}
	return e
}

// New returns an API with no routes.
func New(cfg Config) (*API, error) {
	cfg.MaxBodyBytes = cmp.Or(cfg.MaxBodyBytes, 1<<20)
	if cfg.AuthFailures == nil {
		cfg.AuthFailures = NewFailureLimiter(0, 0)
	}
	if cfg.Logger == nil || cfg.Auth == nil {
		panic("httpapi: Config.Logger and Config.Auth are required")
	}
	if cfg.PageKey == nil {
		cfg.PageKey = newPageKey()
	}
	if len(cfg.PageKey) < pageKeySize {
		return nil, fmt.Errorf("httpapi: Config.PageKey has %d bytes, want at least %d", len(cfg.PageKey), pageKeySize)
	}
	a := &API{cfg: cfg, mux: http.NewServeMux(), metrics: newMetrics(cfg.Registerer), handlers: map[string]HandlerFunc{}}
	if cfg.Spec != nil {
		v, err := newValidator(cfg.Spec)
		if err != nil {
			return nil, err
		}
		a.validator = v
	}
	return a, nil
}

// Handle registers h for pattern, in ServeMux syntax extended with AEP custom
// methods: "POST /api/v1/things/{id}:rehydrate". The request passes
// authentication, the query check, the body limit, spec validation and, for
// POST, the idempotency check before h runs.
func (a *API) Handle(pattern string, h HandlerFunc) {
	if a.validator != nil && a.validator.routes[pattern] == nil {
		a.undocumented = append(a.undocumented, pattern)
	}
	a.handlers[pattern] = h
	a.mux.Handle(muxPattern(pattern), a.route(pattern, h, true))
}

// Undocumented lists the patterns registered with Handle that the OpenAPI
// document does not describe.
func (a *API) Undocumented() []string { return a.undocumented }

// HandlePublic registers h like Handle but without authentication (health,
// the OpenAPI document).
func (a *API) HandlePublic(pattern string, h HandlerFunc) {
	a.mux.Handle(muxPattern(pattern), a.route(pattern, h, false))
}

// HandleRaw registers a plain http.Handler (the Prometheus scrape endpoint)
// with logging and metrics only.
func (a *API) HandleRaw(pattern string, h http.Handler) {
	a.mux.Handle(muxPattern(pattern), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		infoFrom(r.Context()).route = r.Pattern
		h.ServeHTTP(w, r)
	}))
}

// ServeHTTP serves a request: request id, access log, metrics, span, panic
// recovery, then routing. Unknown paths and methods answer problem+json.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info, r := a.begin(w, r)
	rec := &statusRecorder{ResponseWriter: w}
	defer a.end(rec, r, info)

	routed := r
	if p := verbPath(r.URL.Path); p != r.URL.Path {
		routed = r.Clone(r.Context())
		routed.URL.Path = p
		routed.URL.RawPath = ""
	}
	if err := a.dotSegments(routed); err != nil {
		a.WriteError(rec, routed, err)
		return
	}
	if _, pattern := a.mux.Handler(routed); pattern == "" {
		a.unrouted(rec, routed)
		return
	}
	a.mux.ServeHTTP(rec, routed)
}

// WriteError answers err as problem+json. 5xx errors are logged with the
// request id; 4xx are the client's and are not.
func (a *API) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	info := infoFrom(r.Context())
	p, known := a.cfg.Problems.problemFor(err, info.id, r.PathValue)
	if p.Status >= 500 {
		a.cfg.Logger.ErrorContext(r.Context(), "request failed", "error", err, "request_id", info.id, "known", known)
	}
	info.reason = p.Reason
	writeProblem(w, p)
}

// route wraps a domain handler in the per-route conventions.
func (a *API) route(pattern string, h HandlerFunc, authenticate bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoFrom(r.Context())
		info.route = r.Pattern
		_, named := a.auditNames[pattern]
		audit := a.cfg.Audit != nil && (mutating(r.Method) || named)
		if authenticate {
			ctx, err := a.authenticate(r, pattern)
			if err != nil {
				if errors.Is(err, auth.ErrUnauthenticated) {
					w.Header().Set("WWW-Authenticate", `Bearer realm="steward"`)
				}
				var limited *RetryAfterError
				if errors.As(err, &limited) {
					w.Header().Set("Retry-After", strconv.Itoa(limited.Seconds))
				}
				a.WriteError(w, r, err)
				if audit {
					// ctx names the principal when only authorization failed.
					a.cfg.Audit.Denied(ctx, a.auditEntry(r.WithContext(ctx), pattern), statusOf(w), info.reason)
				}
				return
			}
			r = r.WithContext(ctx)
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, a.cfg.MaxBodyBytes)
		}
		// Before the audit record begins: a create's id may come from its body.
		immutable, stripErr := a.stripOutputOnly(r, pattern)
		if audit {
			r = r.WithContext(a.cfg.Audit.Begin(r.Context(), a.auditEntry(r, pattern)))
			defer func() { a.cfg.Audit.Finish(r.Context(), statusOf(w), info.reason) }()
		}
		if err := cmp.Or(checkQuery(r.URL.RawQuery), stripErr); err != nil {
			a.WriteError(w, r, err)
			return
		}
		if a.validator != nil {
			if err := a.validator.checkParameterNames(r, pattern); err != nil {
				a.WriteError(w, r, err)
				return
			}
			if err := a.validator.validate(r, pattern); err != nil {
				a.WriteError(w, r, err)
				return
			}
		}
		if err := a.checkImmutable(r, pattern, immutable); err != nil {
			a.WriteError(w, r, err)
			return
		}
		if r.Method == http.MethodPost && a.cfg.Idempotency != nil && r.Header.Get(IdempotencyKeyHeader) != "" {
			a.cfg.Idempotency.serve(w, r, a, h)
			return
		}
		if err := h(w, r); err != nil {
			a.WriteError(w, r, err)
		}
	})
}

// stripOutputOnly drops the output-only members of a create or update
// body and returns the immutable members an update's body names
// (outputOnly).
func (a *API) stripOutputOnly(r *http.Request, pattern string) (map[string]json.RawMessage, error) {
	if a.validator == nil || a.validator.outputOnly[pattern] == nil || checkQuery(r.URL.RawQuery) != nil {
		return nil, nil
	}
	return a.validator.outputOnly[pattern].strip(r)
}

// maxProjectLength bounds the project a request names (the length of a
// token's project, a DNS label): rows of it are stored under that name.
const maxProjectLength = 63

// authenticate finds the request's principal and project and checks that
// the principal may use the route. On an authorization failure it returns
// the context with the principal (for the audit record), else r's.
func (a *API) authenticate(r *http.Request, pattern string) (context.Context, error) {
	principal, inProcess := r.Context().Value(actAsKey{}).(auth.Principal)
	if !inProcess {
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		token = strings.TrimSpace(token)
		var err error
		principal, err = a.cfg.Auth.Authenticate(r.Context(), token)
		if errors.Is(err, auth.ErrUnauthenticated) {
			return r.Context(), a.authFailed(r, token, err)
		}
		if err != nil {
			return r.Context(), err
		}
	}
	ctx := auth.WithPrincipal(r.Context(), principal)
	named := r.Header.Get(auth.ProjectHeader)
	if len(named) > maxProjectLength {
		return ctx, invalid.New(auth.ProjectHeader, "must be at most %d characters long", maxProjectLength)
	}
	if pp := r.PathValue("project_id"); pp != "" && !principal.Role.ProjectBound() {
		// A route under /projects/{project_id} names its project in the
		// path. A project-bound principal keeps its own: the domain then
		// finds no rows of the path's project (404, not 403).
		named = pp
	}
	if named == auth.AllProjects {
		if principal.Role != auth.RoleAdmin {
			return ctx, fmt.Errorf("%w: %s may not list every project (%s: %s is for admins)",
				auth.ErrPermissionDenied, principal, auth.ProjectHeader, auth.AllProjects)
		}
		if !a.allProjects[pattern] {
			return ctx, invalid.New(auth.ProjectHeader, "%q (every project) is taken only by %s; name one project",
				auth.AllProjects, strings.Join(slices.Sorted(maps.Keys(a.allProjects)), ", "))
		}
	}
	project, err := auth.ProjectFor(principal, named)
	if err != nil {
		return ctx, err
	}
	ctx = auth.WithProject(ctx, project)
	if err := auth.Authorize(principal, pattern, r.PathValue); err != nil {
		return ctx, err
	}
	return ctx, nil
}

// actAsKey carries, in the context of a request this process hands to the
// API itself, the principal it is made as (ActAs).
type actAsKey struct{}

// ActAs returns ctx for a request that code in this process hands to the
// API's ServeHTTP itself (the web console's calls, for a signed-in
// session): the API serves it as p, already authenticated by the caller,
// instead of reading its Authorization header. Everything after
// authentication is as for a bearer token of p: the project (p's own, or
// the one the request names), authorization by role and route, the audit
// record's actor, the Idempotency-Key's owner (p.Key()).
//
// It cannot be forged from outside: a context value is set only by Go code
// in this process. net/http gives every request read off a connection a
// context of the server's, which never holds this unexported key, and no
// header, cookie or query parameter is turned into it; so a remote client
// is always authenticated by its Authorization header.
func ActAs(ctx context.Context, p auth.Principal) context.Context {
	return context.WithValue(ctx, actAsKey{}, p)
}

// authFailed counts a failed authentication (err) against the presented
// token and the client address, and returns err, or the 429 that one of
// them has earned. The limits come after the authenticator, never before
// it: a valid token must pass whatever its address or its id went
// through (before it, an attacker who knows a token's id, or shares a
// proxy's address, could lock its holder out). The cost of that order is
// the authenticator's one indexed read per bad Steward token; the
// secrets are 256 random bits, so refusing to look is not what stops
// guessing.
func (a *API) authFailed(r *http.Request, token string, err error) error {
	limit, wait := a.cfg.AuthFailures.Fail(credentialKey(token), addressKey(infoFrom(r.Context()).client))
	a.metrics.authFailures.WithLabelValues(limit).Inc()
	if limit == LimitNone {
		return err
	}
	return &RetryAfterError{Seconds: int(math.Ceil(wait.Seconds())), Err: fmt.Errorf("%w %s", ErrTooManyAuthFailures, limitDetail[limit])}
}

// statusOf is the status a response was answered with.
func statusOf(w http.ResponseWriter) int {
	if rec, ok := w.(*statusRecorder); ok {
		return rec.status()
	}
	return http.StatusOK
}

// unrouted answers a request no pattern matched: 404, or 405 with the Allow
// header that ServeMux computed.
func (a *API) unrouted(w http.ResponseWriter, r *http.Request) {
	h, _ := a.mux.Handler(r)
	probe := &headerProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		a.WriteError(w, r, ErrMethodNotAllowed)
		return
	}
	a.WriteError(w, r, ErrRouteNotFound)
}

// headerProbe records what ServeMux's own 404/405 handler would answer.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header         { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *headerProbe) WriteHeader(status int)      { p.status = status }

// muxPattern rewrites a custom-method pattern for ServeMux, whose wildcards
// must fill a whole segment: "/things/{id}:verb" → "/things/{id}/:verb".
func muxPattern(pattern string) string { return verbPath(pattern) }

// verbPath moves a custom method of the last segment into a segment of its
// own: "/things/abc:verb" → "/things/abc/:verb", for patterns and paths alike.
func verbPath(path string) string {
	i := strings.LastIndex(path, "/")
	if j := strings.Index(path[i+1:], ":"); i >= 0 && j > 0 {
		return path[:i+1+j] + "/" + path[i+1+j:]
	}
	return path
}
