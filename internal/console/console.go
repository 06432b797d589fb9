package console

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

//go:embed templates/*.html static/*
var files embed.FS

// The cookies of a browser's session.
const (
	sessionCookie = "steward_session" // the session's id (Sessions), never a token
	csrfCookie    = "steward_csrf"    // the double-submit CSRF secret
	csrfField     = "csrf"
)

// contentSecurityPolicy allows the console's own files and nothing inline.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Config configures a [Console].
type Config struct {
	// API is Steward's API handler; the console calls it in process.
	API    http.Handler
	Logger *slog.Logger
	// Now reads the clock (ages on the pages). Defaults to time.Now.
	Now func() time.Time
	// Changes, when set, feeds the live pages (/ui/events); without it
	// pages change only when reloaded.
	Changes Changes
	// Sessions keeps the sign-ins (required).
	Sessions Sessions
	// Open says the API authenticates nobody (--dev): every browser is its
	// principal without signing in. Otherwise a browser with no session is
	// nobody, and the console does not ask the API who it is (a request
	// without a token would count against its address's failures).
	Open bool
}

// Sessions keeps the console's sign-ins on the server (internal/server
// wires the tokens package's console sessions). The browser holds only a
// session's id; the console never keeps a token past the sign-in form.
type Sessions interface {
	// Start authenticates token and starts a session as its principal,
	// returning the session's id (the cookie's value: a secret, which the
	// store keeps only as a hash) and when the session ends at the latest.
	// A token that does not authenticate is ErrSignedOut.
	Start(ctx context.Context, token string) (id string, expires time.Time, err error)
	// Resume returns ctx made to act, in the console's in-process calls to
	// the API, as the principal of session id, read again from its token;
	// ErrSignedOut when id names no live session (signed out, expired, its
	// token revoked or expired).
	Resume(ctx context.Context, id string) (context.Context, error)
	// End deletes session id: its cookie opens nothing after. Ending one
	// that is gone is no error.
	End(ctx context.Context, id string) error
}

// ErrSignedOut is a session or token Sessions does not accept.
var ErrSignedOut = errors.New("console: not signed in")

// Console serves the web console. It is safe for concurrent use.
type Console struct {
	api   http.Handler
	log   *slog.Logger
	now   func() time.Time
	pages map[string]*template.Template

	changes   Changes
	sessions  Sessions
	open      bool
	closing   chan struct{} // closed by Close: live streams end
	closeOnce sync.Once
}

// New returns a Console; it panics if its embedded templates do not parse
// (a build error, caught by any test).
func New(cfg Config) *Console {
	if cfg.API == nil || cfg.Sessions == nil {
		panic("console: Config.API and Config.Sessions are required")
	}
	c := &Console{api: cfg.API, log: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).With("component", "console"),
		now: cfg.Now, pages: map[string]*template.Template{}, changes: cfg.Changes, sessions: cfg.Sessions,
		open: cfg.Open, closing: make(chan struct{})}
	if c.now == nil {
		c.now = time.Now
	}
	funcs := template.FuncMap{"age": c.age, "deref": func(b *bool) bool { return b != nil && *b }, "previewOf": func(title string, p preview) map[string]any {
		return map[string]any{"Title": title, "Result": p}
	}, "otherID": otherID, "tone": tone, "hasList": hasList, "targetLink": targetLink, "lower": strings.ToLower}
	for _, page := range []string{"signin", "orders", "order", "orderform", "update", "confirm", "catalog", "providers", "operations", "operation", "audit", "tokens", "policies", "editor", "servicetypes", "rego", "error"} {
		c.pages[page] = template.Must(template.New("layout.html").Funcs(funcs).
			ParseFS(files, "templates/layout.html", "templates/fields.html", "templates/"+page+".html"))
	}
	return c
}

// Router is where the console's routes go (httpapi.API's HandleRaw).
type Router interface {
	HandleRaw(pattern string, h http.Handler)
}

// Routes registers the console's pages under /ui/, and / redirecting
// there.
func (c *Console) Routes(r Router) {
	redirect := func(to string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) })
	}
	r.HandleRaw("GET /{$}", redirect("/ui/"))
	r.HandleRaw("GET /ui", redirect("/ui/"))
	r.HandleRaw("GET /ui/{$}", redirect("/ui/orders"))
	r.HandleRaw("GET /ui/static/", http.StripPrefix("/ui", c.static()))
	r.HandleRaw("GET /ui/signin", c.page(c.signinPage))
	r.HandleRaw("POST /ui/signin", c.page(c.signin))
	r.HandleRaw("POST /ui/signout", c.page(c.signout))
	r.HandleRaw("GET /ui/events", c.page(c.events))
	r.HandleRaw("GET /ui/orders", c.page(c.ordersPage))
	r.HandleRaw("GET /ui/orders/{id}", c.page(c.orderPage))
	r.HandleRaw("GET /ui/orders/{id}/confirm", c.page(c.confirmPage))
	r.HandleRaw("POST /ui/orders/{id}/rehydrate", c.page(c.startOperation("rehydrate", "rehydrate", "Rehydration started")))
	r.HandleRaw("POST /ui/orders/{id}/rotate-credentials", c.page(c.startOperation("rotate-credentials", "rotateCredentials",
		"Credential rotation started")))
	r.HandleRaw("POST /ui/orders/{id}/delete", c.page(c.deleteOrder))
	r.HandleRaw("POST /ui/orders/{id}/set-state", c.page(c.setState))
	r.HandleRaw("POST /ui/orders/{id}/force-delete", c.page(c.forceDelete))
	r.HandleRaw("POST /ui/orders/{id}/repair", c.page(c.repairAction))
	r.HandleRaw("GET /ui/orders/{id}/update", c.page(c.updatePage))
	r.HandleRaw("POST /ui/orders/{id}/update", c.page(c.update))
	r.HandleRaw("GET /ui/catalog", c.page(c.catalogPage))
	r.HandleRaw("GET /ui/catalog/{id}/order", c.page(c.orderFormPage))
	r.HandleRaw("GET /ui/providers", c.page(c.providersPage))
	r.HandleRaw("GET /ui/operations", c.page(c.operationsPage))
	r.HandleRaw("GET /ui/operations/{id}", c.page(c.operationPage))
	r.HandleRaw("POST /ui/cleanup-tasks/{id}/retry", c.page(c.retryTask))
	r.HandleRaw("GET /ui/audit", c.page(c.auditPage))
	r.HandleRaw("GET /ui/service-types", c.page(c.serviceTypesPage))
	r.HandleRaw("GET /ui/service-types/{id}/edit", c.page(c.editPage(serviceTypeKind)))
	r.HandleRaw("POST /ui/service-types/{id}/edit", c.page(c.saveEdit(serviceTypeKind)))
	r.HandleRaw("GET /ui/catalog/{id}/edit", c.page(c.editPage(catalogItemKind)))
	r.HandleRaw("POST /ui/catalog/{id}/edit", c.page(c.saveEdit(catalogItemKind)))
	r.HandleRaw("GET /ui/tokens", c.page(c.tokensPage))
	r.HandleRaw("POST /ui/tokens", c.page(c.createToken))
	r.HandleRaw("POST /ui/tokens/{id}/revoke", c.page(c.revokeToken))
	r.HandleRaw("GET /ui/policies", c.page(c.policiesPage))
	r.HandleRaw("POST /ui/policies/{id}/enabled", c.page(c.enablePolicy))
	r.HandleRaw("GET /ui/policies/{id}/edit", c.page(c.regoPage))
	r.HandleRaw("POST /ui/policies/{id}/edit", c.page(c.saveRego))
	r.HandleRaw("POST /ui/policies/{id}/test", c.page(c.testRego))
	r.HandleRaw("POST /ui/catalog/{id}/order", c.page(c.placeOrder))
	r.HandleRaw("POST /ui/catalog/{id}/preview", c.page(c.previewOrder))
}

func (c *Console) static() http.Handler {
	sub, _ := fs.Sub(files, ".") // the embedded tree always has "."
	fileServer := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		w.Header().Set("Cache-Control", "public, max-age=300")
		fileServer.ServeHTTP(w, r)
	})
}

// page wraps a page handler: security headers, the session and the CSRF
// cookie, and an error page (or the sign-in page, for a caller the API
// does not know).
func (c *Console) page(h func(w http.ResponseWriter, r *http.Request, s *session) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		w.Header().Set("Cache-Control", "no-store")
		s, err := c.session(w, r)
		if err == nil {
			err = h(w, r, s)
		}
		var apiErr *apiError
		switch {
		case err == nil:
		case errors.As(err, &apiErr) && apiErr.Status == http.StatusUnauthorized:
			http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
		case errors.Is(err, errBadCSRF):
			w.WriteHeader(http.StatusForbidden)
			c.render(w, "error", s, map[string]any{"Title": "Refused", "Message": "The form was stale or not ours. Go back, reload and try again."})
		case errors.As(err, &apiErr):
			w.WriteHeader(apiErr.Status)
			c.render(w, "error", s, map[string]any{"Title": apiErr.Heading(), "Problem": apiErr})
		default:
			c.log.ErrorContext(r.Context(), "console page failed", "path", r.URL.Path, "error", err)
			w.WriteHeader(http.StatusInternalServerError)
			c.render(w, "error", s, map[string]any{"Title": "Error", "Message": "The console met an unexpected error; it was logged."})
		}
	})
}

func securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// session is what a request carries: its signed-in session, if any, and
// its CSRF secret.
type session struct {
	// id is the signed-in session's id ("" before sign-in, and on a --dev
	// server, where nobody needs to); act, the context the API's
	// in-process calls are made in as its principal (Sessions.Resume).
	id  string
	act context.Context
	// bearer is the token the sign-in form checks with the API: the only
	// call made with a token, never kept.
	bearer string
	csrf   string
	// project, when set, is the project the page acts in (the
	// Steward-Project header: admins only; "*" lists every project's).
	project string
	// r is the request the session came with; who, once asked, its caller.
	r   *http.Request
	who *caller
}

// session reads the cookies: it resumes the signed-in session (a cookie
// naming none that is live is deleted, and the request is nobody's), and
// gives the browser a CSRF secret if it has none.
func (c *Console) session(w http.ResponseWriter, r *http.Request) (*session, error) {
	s := &session{r: r}
	if ck, err := r.Cookie(sessionCookie); err == nil && ck.Value != "" {
		act, err := c.sessions.Resume(r.Context(), ck.Value)
		switch {
		case errors.Is(err, ErrSignedOut):
			http.SetCookie(w, cookie(r, sessionCookie, "", -1))
		case err != nil:
			return s, err
		default:
			s.id, s.act = ck.Value, act
		}
	}
	if ck, err := r.Cookie(csrfCookie); err == nil && len(ck.Value) >= 32 {
		s.csrf = ck.Value
	} else {
		s.csrf = newCSRF(w, r)
	}
	// A page names its project in ?project= (a form, in its action), so an
	// admin's link to another project's order opens it.
	s.project = trimmed(r, "project")
	return s, nil
}

// newCSRF gives the browser a new CSRF secret and returns it.
func newCSRF(w http.ResponseWriter, r *http.Request) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	secret := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, cookie(r, csrfCookie, secret, 0))
	return secret
}

// orderURL is order id's page in the session's project, with a notice.
func orderURL(s *session, id, notice string) string {
	return query("/ui/orders/"+url.PathEscape(id), map[string]string{"notice": notice, "project": s.project})
}

// cookie is a console cookie: HttpOnly, SameSite=Strict, Secure over TLS;
// maxAge < 0 deletes it.
func cookie(r *http.Request, name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/ui/", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
}

var errBadCSRF = errors.New("console: CSRF token missing or wrong")

// checkCSRF refuses a form whose CSRF field is not the browser's secret.
func checkCSRF(r *http.Request, s *session) error {
	got := r.PostFormValue(csrfField)
	ck, err := r.Cookie(csrfCookie)
	if err != nil || got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(ck.Value)) != 1 {
		return errBadCSRF
	}
	return nil
}

func (c *Console) render(w http.ResponseWriter, page string, s *session, data map[string]any) {
	if data == nil {
		data = map[string]any{}
	}
	data["CSRF"] = s.csrf
	data["Levels"] = []string{"GLOBAL", "TENANT", "USER"}
	data["SignedIn"] = s.id != ""
	if s.r != nil {
		data["Caller"] = c.caller(s.r, s)
		data["Nav"] = navFor(s.r.URL.Path)
	}
	var buf bytes.Buffer
	if err := c.pages[page].Execute(&buf, data); err != nil {
		c.log.Error("render a console page", "page", page, "error", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// caller is who the session signs in as (GET /api/v1/whoami).
type caller struct {
	Principal struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"principal"`
	Role    string `json:"role"`
	Project string `json:"project"`
	Open    bool   `json:"open"`
}

// caller asks the API who the session's principal is, once per request;
// a session the API does not know is nobody (the zero caller).
func (c *Console) caller(r *http.Request, s *session) *caller {
	if s.who == nil {
		s.who = &caller{}
		if s.act == nil && !c.open {
			return s.who // signed out: nobody
		}
		// In the default project: a page's "*" (every project) is for lists.
		asked := &session{id: s.id, act: s.act, csrf: s.csrf}
		if err := c.call(r, asked, http.MethodGet, "/api/v1/whoami", nil, s.who); err != nil {
			*s.who = caller{}
		}
	}
	return s.who
}

// isAdmin says whether the session's principal is an admin, so that a page
// leaves out what only admins may do; the API still decides every action,
// so a wrong answer here hides or shows a button, nothing more.
func (c *Console) isAdmin(r *http.Request, s *session) bool { return c.caller(r, s).Role == "admin" }

// refusal returns err's API error when it is a refusal a form shows next
// to what was sent (a 4xx other than 401, which means signing in again).
func refusal(err error) (*apiError, bool) {
	var e *apiError
	if errors.As(err, &e) && e.Status >= 400 && e.Status < 500 && e.Status != http.StatusUnauthorized {
		return e, true
	}
	return nil, false
}

// call sends a request to the API in process as the session's principal
// and decodes a 2xx answer into out. A signed-in session's request is made
// in the context Sessions.Resume gave, which the API honours as that
// principal's (no token is sent); any other goes without credentials (a
// --dev server's, which authenticates everyone), or with the sign-in
// form's bearer token.
func (c *Console) call(r *http.Request, s *session, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx := r.Context()
	if s.act != nil {
		ctx = s.act
	}
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return err
	}
	req.RemoteAddr, req.Host = r.RemoteAddr, r.Host
	// Behind a trusted proxy the API takes the client's address from
	// X-Forwarded-For: without it every browser's sign-in failures would
	// count against the proxy's address, and lock all of them out.
	for _, v := range r.Header.Values("X-Forwarded-For") {
		req.Header.Add("X-Forwarded-For", v)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if s.act == nil && s.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+s.bearer)
	}
	if s.project != "" {
		req.Header.Set("Steward-Project", s.project)
	}
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	c.api.ServeHTTP(rec, req)
	if rec.status < 200 || rec.status > 299 {
		e := &apiError{Status: rec.status}
		_ = json.Unmarshal(rec.body.Bytes(), e)
		e.Reason = cmp.Or(e.Reason, http.StatusText(rec.status))
		return e
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(rec.body.Bytes(), out)
}

// recorder keeps an in-process API answer.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}

// age says how long ago t was, coarsely: 45s, 12m, 3h, 5d.
func (c *Console) age(t time.Time) string {
	d := c.now().Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// query builds path?values, leaving out empty values.
func query(path string, values map[string]string) string {
	q := url.Values{}
	for k, v := range values {
		if v != "" {
			q.Set(k, v)
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// trimmed is a form or query value without surrounding space.
func trimmed(r *http.Request, name string) string { return strings.TrimSpace(r.FormValue(name)) }
