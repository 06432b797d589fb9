package provider

import (
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ServerConfig configures [NewServer]. The zero value is a valid
// configuration: no authentication, no logs.
type ServerConfig struct {
	// Logger receives a line for each 5xx answer (Error) and each 4xx
	// (Debug). Defaults to discarding.
	Logger *slog.Logger
	// Token, when set, is required from Steward on every request, health
	// included, as "Authorization: Bearer <token>"; other requests answer
	// 401 UNAUTHENTICATED. Defaults to none: the server is open.
	Token string
	// ExportKey signs the tokens of export grants ([Exporter]). A provider
	// that keeps it across restarts (derived from a key of its own) keeps
	// the grants it gave valid when it restarts. Defaults to a random key
	// per server.
	ExportKey []byte
	// ExportTTL is how long a grant's token may start an export. Defaults
	// to [DefaultExportTTL].
	ExportTTL time.Duration
}

// The routes of the wire contract (API.md, "Provider-side contract").
const (
	servicesPath = "/api/v1/services"
	healthPath   = "/api/v1/health"
	// repairSuffix follows an instance's path for [Repairer]s.
	repairSuffix = "/repair"
	// credentialsSuffix and rotateSuffix follow an instance's path for
	// [Credentialer]s.
	credentialsSuffix = "/credentials"
	rotateSuffix      = "/credentials:rotate"
)

// NewServer returns the HTTP handler that serves p as the contract says:
//
//   - POST /api/v1/services: decodes a [CreateRequest] (instance_id and
//     service_type required, else 400) and calls p.Create. It answers 201
//     with the [Instance] every time, a replay for an instance that exists
//     included: a Provider cannot say which it was, and Steward treats every
//     2xx alike. The Idempotency-Key header (the instance id) is not stored:
//     Provider.Create is idempotent by instance id already.
//   - GET /api/v1/services/{instance_id}: 200 with the Instance.
//   - PUT /api/v1/services/{instance_id}, only when p implements [Updater]:
//     decodes an [UpdateRequest] (service_type required, else 400; the
//     instance id is the path's) and calls p.Update. It answers 200 with the
//     Instance, usually PROVISIONING while the update goes on. Without
//     Updater, PUT answers 405 with Allow: GET, DELETE, and Steward replaces
//     instead.
//   - DELETE /api/v1/services/{instance_id}: 200 with the Instance when its
//     status is DELETED, else 202 (the deletion goes on).
//   - POST /api/v1/services/{instance_id}/repair, only when p implements
//     [Repairer]: decodes a [RepairRequest] (operation_id, action and scope
//     required, else 400) and calls p.Repair; 202 with the [RepairAccepted].
//   - GET /api/v1/services/{instance_id}/credentials and POST
//     /api/v1/services/{instance_id}/credentials:rotate, only when p
//     implements [Credentialer], and only to a caller with the token: a
//     server without one answers them 401. 200 with the [Credentials]
//     (Cache-Control: no-store) or the [Rotated].
//   - POST /api/v1/services/{instance_id}/export:begin and :end, and GET
//     /api/v1/services/{instance_id}/export, only when p implements
//     [Exporter] and the server has a token (see Exporter). The GET is the
//     one route whose caller is not Steward: it takes a grant's token.
//   - POST /api/v1/services:validate, only when p implements [Validator]:
//     204 when p would accept the [CreateRequest], its refusal otherwise.
//   - GET /api/v1/health: 200 {"status":"healthy"}, or 200
//     {"status":"unhealthy","message":...} when p.Health fails: the provider
//     is reachable, but its backend is not.
//
// Every error is application/problem+json ([Problem]): [ErrNotFound] → 404
// INSTANCE_NOT_FOUND; an error with HTTPStatus() int (such as [*HTTPError])
// → that status, with the reason of its ProblemReason() string if it has
// one; any other error → 500 INTERNAL with the error's text as detail (it is
// the provider's own message). A body over 1 MiB answers 413, malformed JSON
// 400, a non-JSON Content-Type 415, an unknown path 404 and a known path with
// another method 405 with Allow. A panic in p answers 500.
//
// The handler calls p with the request's context, and is safe for
// concurrent use if p is.
func NewServer(p Provider, cfg ServerConfig) http.Handler {
	if p == nil {
		panic("provider: NewServer with a nil Provider")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &server{p: p, token: cfg.Token, logger: logger.With("component", "provider.server"),
		instanceMethods: []string{http.MethodGet, http.MethodDelete}}
	if u, ok := p.(Updater); ok {
		s.updater = u
		s.instanceMethods = append(s.instanceMethods, http.MethodPut)
	}
	s.repairer, _ = p.(Repairer)
	s.credentialer, _ = p.(Credentialer)
	s.validator, _ = p.(Validator)
	s.exporter, _ = p.(Exporter)
	s.exportTokens = newExportTokens(cfg.ExportKey, cfg.ExportTTL)
	return s
}

type server struct {
	p Provider
	// updater is p when it implements Updater, else nil.
	updater Updater
	// repairer is p when it implements Repairer, else nil.
	repairer Repairer
	// credentialer is p when it implements Credentialer, else nil.
	credentialer Credentialer
	// validator is p when it implements Validator, else nil.
	validator Validator
	// exporter is p when it implements Exporter, else nil.
	exporter     Exporter
	exportTokens exportTokens
	// instanceMethods are the methods served on /api/v1/services/{id}.
	instanceMethods []string
	token           string
	logger          *slog.Logger
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.fail(w, r, fmt.Errorf("provider panicked: %v", v))
		}
	}()
	path := r.URL.EscapedPath()
	if s.exporter != nil && s.token != "" && strings.HasPrefix(path, servicesPath+"/") && strings.HasSuffix(path, exportSuffix) {
		// The reader is another provider, with a grant's token, not Steward.
		if id, ok := s.instanceOf(w, r, path, exportSuffix); ok && s.allow(w, r, http.MethodGet) {
			s.export(w, r, id)
		}
		return
	}
	if s.token != "" && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="provider"`)
		s.problem(w, r, http.StatusUnauthorized, "UNAUTHENTICATED", "a valid bearer token is required")
		return
	}
	switch {
	case path == servicesPath:
		if s.allow(w, r, http.MethodPost) {
			s.create(w, r)
		}
	case path == healthPath:
		if s.allow(w, r, http.MethodGet) {
			s.health(w, r)
		}
	case s.validator != nil && path == servicesPath+validateSuffix:
		if s.allow(w, r, http.MethodPost) {
			s.validate(w, r)
		}
	case s.repairer != nil && strings.HasPrefix(path, servicesPath+"/") && strings.HasSuffix(path, repairSuffix):
		if id, ok := s.instanceOf(w, r, path, repairSuffix); ok && s.allow(w, r, http.MethodPost) {
			s.repair(w, r, id)
		}
	case s.credentialer != nil && strings.HasPrefix(path, servicesPath+"/") && strings.HasSuffix(path, credentialsSuffix):
		if id, ok := s.instanceOf(w, r, path, credentialsSuffix); ok && s.allow(w, r, http.MethodGet) && s.secretsAllowed(w, r) {
			s.credentials(w, r, id)
		}
	case s.credentialer != nil && strings.HasPrefix(path, servicesPath+"/") && strings.HasSuffix(path, rotateSuffix):
		if id, ok := s.instanceOf(w, r, path, rotateSuffix); ok && s.allow(w, r, http.MethodPost) && s.secretsAllowed(w, r) {
			s.rotate(w, r, id)
		}
	case s.exporter != nil && strings.HasPrefix(path, servicesPath+"/") && strings.HasSuffix(path, exportBeginSuffix):
		if id, ok := s.instanceOf(w, r, path, exportBeginSuffix); ok && s.allow(w, r, http.MethodPost) && s.secretsAllowed(w, r) {
			s.beginExport(w, r, id)
		}
	case s.exporter != nil && strings.HasPrefix(path, servicesPath+"/") && strings.HasSuffix(path, exportEndSuffix):
		if id, ok := s.instanceOf(w, r, path, exportEndSuffix); ok && s.allow(w, r, http.MethodPost) && s.secretsAllowed(w, r) {
			s.endExport(w, r, id)
		}
	case s.exporter != nil && strings.HasPrefix(path, servicesPath+"/") && strings.HasSuffix(path, exportSuffix):
		// Only an open server comes here (see above), and it exports nothing.
		if _, ok := s.instanceOf(w, r, path, exportSuffix); ok {
			s.secretsAllowed(w, r)
		}
	case strings.HasPrefix(path, servicesPath+"/"):
		id, err := url.PathUnescape(strings.TrimPrefix(path, servicesPath+"/"))
		if err != nil || id == "" || strings.Contains(id, "/") {
			s.problem(w, r, http.StatusNotFound, "NOT_FOUND", "no resource at this path")
			return
		}
		if !s.allow(w, r, s.instanceMethods...) {
			return
		}
		switch r.Method {
		case http.MethodGet:
			s.get(w, r, id)
		case http.MethodPut:
			s.update(w, r, id)
		default:
			s.delete(w, r, id)
		}
	default:
		s.problem(w, r, http.StatusNotFound, "NOT_FOUND", "no resource at this path")
	}
}

func (s *server) create(w http.ResponseWriter, r *http.Request) {
	var req CreateRequest
	if !s.decode(w, r, &req) {
		return
	}
	var missing []string
	if req.InstanceID == "" {
		missing = append(missing, "instance_id")
	}
	if req.ServiceType == "" {
		missing = append(missing, "service_type")
	}
	if len(missing) > 0 {
		s.problem(w, r, http.StatusBadRequest, "INVALID_ARGUMENT", strings.Join(missing, " and ")+" required")
		return
	}
	inst, err := s.p.Create(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.instance(w, r, http.StatusCreated, req.InstanceID, inst)
}

func (s *server) get(w http.ResponseWriter, r *http.Request, id string) {
	inst, err := s.p.Get(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.instance(w, r, http.StatusOK, id, inst)
}

func (s *server) update(w http.ResponseWriter, r *http.Request, id string) {
	var req UpdateRequest
	if !s.decode(w, r, &req) {
		return
	}
	if req.ServiceType == "" {
		s.problem(w, r, http.StatusBadRequest, "INVALID_ARGUMENT", "service_type required")
		return
	}
	req.InstanceID = id
	inst, err := s.updater.Update(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.instance(w, r, http.StatusOK, id, inst)
}

func (s *server) repair(w http.ResponseWriter, r *http.Request, id string) {
	var req RepairRequest
	if !s.decode(w, r, &req) {
		return
	}
	if req.OperationID == "" || req.Action == "" || req.Scope == "" {
		s.problem(w, r, http.StatusBadRequest, "INVALID_ARGUMENT", "operation_id, action and scope required")
		return
	}
	req.InstanceID = id
	acc, err := s.repairer.Repair(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if acc.OperationID == "" {
		acc.OperationID = req.OperationID
	}
	writeJSON(w, http.StatusAccepted, acc)
}

// instanceOf reads the instance id between the services path and suffix,
// answering 404 when there is none.
func (s *server) instanceOf(w http.ResponseWriter, r *http.Request, path, suffix string) (string, bool) {
	id, err := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(path, servicesPath+"/"), suffix))
	if err != nil || id == "" || strings.Contains(id, "/") {
		s.problem(w, r, http.StatusNotFound, "NOT_FOUND", "no resource at this path")
		return "", false
	}
	return id, true
}

// secretsAllowed refuses the routes that hand out secrets on a server that
// authenticates nobody: whoever reaches an open server, loopback included,
// is not known to be Steward.
func (s *server) secretsAllowed(w http.ResponseWriter, r *http.Request) bool {
	if s.token != "" {
		return true // ServeHTTP checked it
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="provider"`)
	s.problem(w, r, http.StatusUnauthorized, "UNAUTHENTICATED",
		"credentials are served only to an authenticated caller, and this provider has no token")
	return false
}

func (s *server) credentials(w http.ResponseWriter, r *http.Request, id string) {
	c, err := s.credentialer.Credentials(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c.InstanceID = id
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, c)
}

func (s *server) rotate(w http.ResponseWriter, r *http.Request, id string) {
	var req RotateRequest
	if !s.decode(w, r, &req) {
		return
	}
	if req.OperationID == "" {
		s.problem(w, r, http.StatusBadRequest, "INVALID_ARGUMENT", "operation_id required")
		return
	}
	req.InstanceID = id
	rot, err := s.credentialer.RotateCredentials(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rot.InstanceID, rot.OperationID = id, req.OperationID
	writeJSON(w, http.StatusOK, rot)
}

func (s *server) delete(w http.ResponseWriter, r *http.Request, id string) {
	inst, err := s.p.Delete(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	code := http.StatusAccepted
	if inst.Status == StatusDeleted {
		code = http.StatusOK
	}
	s.instance(w, r, code, id, inst)
}

func (s *server) health(w http.ResponseWriter, r *http.Request) {
	h := Health{Status: HealthHealthy}
	if err := s.p.Health(r.Context()); err != nil {
		h = Health{Status: HealthUnhealthy, Message: err.Error()}
	}
	writeJSON(w, http.StatusOK, h)
}

// instance writes inst, filling the id a Provider may leave out, and
// refuses a status outside the contract: Steward would reject the answer.
func (s *server) instance(w http.ResponseWriter, r *http.Request, code int, id string, inst Instance) {
	if inst.InstanceID == "" {
		inst.InstanceID = id
	}
	if !inst.Status.Valid() {
		s.fail(w, r, fmt.Errorf("provider returned instance %q with invalid status %q", id, inst.Status))
		return
	}
	writeJSON(w, code, inst)
}

// decode reads the JSON body into dst, or answers the problem and returns false.
func (s *server) decode(w http.ResponseWriter, r *http.Request, dst any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			s.problem(w, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "request body must be application/json")
			return false
		}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	err := dec.Decode(dst)
	if err == nil {
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			err = cmp.Or(terr, errors.New("more than one JSON value"))
		}
	}
	var maxErr *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return true
	case errors.As(err, &maxErr):
		s.problem(w, r, http.StatusRequestEntityTooLarge, "BODY_TOO_LARGE", "request body is larger than 1 MiB")
	case errors.As(err, &typeErr):
		s.problem(w, r, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("%s must be %s, not %s", cmp.Or(typeErr.Field, "body"), typeErr.Type.Kind(), typeErr.Value))
	case errors.Is(err, io.EOF):
		s.problem(w, r, http.StatusBadRequest, "MALFORMED_JSON", "request body is empty")
	default:
		s.problem(w, r, http.StatusBadRequest, "MALFORMED_JSON", "request body is not valid JSON: "+err.Error())
	}
	return false
}

// fail answers a Provider's error as the package comment of NewServer says.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, reason := http.StatusInternalServerError, "INTERNAL"
	var st interface{ HTTPStatus() int }
	switch {
	case errors.Is(err, ErrNotFound):
		code, reason = http.StatusNotFound, "INSTANCE_NOT_FOUND"
	case errors.As(err, &st) && st.HTTPStatus() >= 400 && st.HTTPStatus() <= 599:
		code, reason = st.HTTPStatus(), reasonOf(st.HTTPStatus())
		var rs interface{ ProblemReason() string }
		if errors.As(err, &rs) && rs.ProblemReason() != "" {
			reason = rs.ProblemReason()
		}
	}
	s.problem(w, r, code, reason, err.Error())
}

func (s *server) problem(w http.ResponseWriter, r *http.Request, code int, reason, detail string) {
	level := slog.LevelDebug
	if code >= 500 {
		level = slog.LevelError
	}
	s.logger.Log(r.Context(), level, "answer problem", "method", r.Method, "path", r.URL.Path,
		"status", code, "reason", reason, "detail", detail)
	p := Problem{
		Type:   "https://steward.dev/problems/" + strings.ToLower(strings.ReplaceAll(reason, "_", "-")),
		Title:  http.StatusText(code),
		Status: code,
		Detail: detail,
		Reason: reason,
	}
	b, _ := json.Marshal(p) // strings and an int: cannot fail
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// allow reports whether r's method is one of methods, or answers 405.
func (s *server) allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	s.problem(w, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", r.Method+" is not served on this path")
	return false
}

func (s *server) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

// reasonOf turns a status into a reason: 409 → CONFLICT.
func reasonOf(code int) string {
	text := cmp.Or(http.StatusText(code), "ERROR")
	return strings.ToUpper(strings.NewReplacer(" ", "_", "-", "_", "'", "").Replace(text))
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // only the package's own types come here
		panic(fmt.Sprintf("provider: encode answer: %v", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
