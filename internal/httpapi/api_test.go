package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
)

// tokenAuth maps tokens to principals, so tests can act as several callers.
type tokenAuth struct{}

func (tokenAuth) Authenticate(_ context.Context, token string) (auth.Principal, error) {
	if token == "" {
		return auth.Principal{Type: "user", ID: "alice", Role: auth.RoleAdmin}, nil
	}
	return auth.Principal{Type: "user", ID: token, Role: auth.RoleAdmin}, nil
}

var errWidgetGone = errors.New("widget gone")

// testSpec documents the widget routes, so validation runs on them.
const testSpec = `
openapi: 3.0.3
info: {title: t, version: v1}
paths:
  /api/v1/widgets:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: {type: string, maxLength: 10}
      responses: {"201": {description: ok}}
  /api/v1/sprockets:
    # A collection (it lists), so its POST is a create whose body may name the id.
    get:
      responses: {"200": {description: ok}}
    post:
      parameters:
        - {name: id, in: query, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [name]
              properties:
                name: {type: string, maxLength: 10}
                labels: {type: object, additionalProperties: {type: string}}
                size:
                  type: object
                  additionalProperties: false
                  properties:
                    count: {type: integer}
                note: {type: string, nullable: true}
      responses: {"201": {description: ok}}
  /api/v1/widgets/{widget_id}:frob:
    post:
      parameters:
        - {name: widget_id, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
`

type harness struct {
	api   *httpapi.API
	srv   *httptest.Server
	calls atomic.Int32
	// entered receives when a slow-widgets request with X-Block: 1 is in
	// its handler; it then waits until gate is closed.
	entered chan struct{}
	gate    chan struct{}
}

func newHarness(t *testing.T, cfg httpapi.Config) *harness {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	cfg.Auth = tokenAuth{}
	cfg.Problems = append(httpapi.BaseProblems(),
		httpapi.Mapping{Match: func(err error) bool { var e *invalid.Error; return errors.As(err, &e) },
			Status: 400, Reason: "INVALID_ARGUMENT", Title: "Invalid argument"},
		httpapi.Mapping{Err: errWidgetGone, Status: 404, Reason: "WIDGET_NOT_FOUND", Title: "Widget not found"})
	if cfg.Spec == nil {
		spec, _, err := httpapi.LoadSpec(context.Background(), []byte(testSpec))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Spec = spec
	}
	api, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{api: api, entered: make(chan struct{}, 1), gate: make(chan struct{})}
	api.Handle("POST /api/v1/widgets", func(w http.ResponseWriter, r *http.Request) error {
		var in struct {
			Name string `json:"name"`
			Size int    `json:"size"`
		}
		if err := httpapi.DecodeJSON(r, &in); err != nil {
			return err
		}
		n := h.calls.Add(1)
		if in.Name == "missing" {
			return errWidgetGone
		}
		w.Header().Set("Location", "/api/v1/widgets/"+in.Name)
		return httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"name": in.Name, "call": n})
	})
	api.Handle("POST /api/v1/sprockets", func(w http.ResponseWriter, r *http.Request) error {
		var in struct {
			Name string `json:"name"`
		}
		if err := httpapi.DecodeJSON(r, &in); err != nil {
			return err
		}
		return httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"name": in.Name})
	})
	api.Handle("POST /api/v1/widgets/{widget_id}:frob", func(w http.ResponseWriter, r *http.Request) error {
		return httpapi.WriteJSON(w, http.StatusOK, map[string]string{"frobbed": r.PathValue("widget_id")})
	})
	api.Handle("GET /api/v1/widgets/{widget_id}", func(w http.ResponseWriter, r *http.Request) error {
		if r.PathValue("widget_id") == "boom" {
			panic("handler bug with secret detail")
		}
		return errWidgetGone
	})
	api.Handle("POST /api/v1/slow-widgets", func(w http.ResponseWriter, r *http.Request) error {
		if r.Header.Get("X-Block") == "1" {
			h.entered <- struct{}{}
			<-h.gate
		}
		h.calls.Add(1)
		return httpapi.WriteJSON(w, http.StatusCreated, map[string]string{"ok": "yes"})
	})
	h.srv = httptest.NewServer(api)
	t.Cleanup(h.srv.Close)
	return h
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (h *harness) do(t *testing.T, method, path, body string, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

func (a answer) reason(t *testing.T) string {
	t.Helper()
	if ct := a.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q (status %d, body %s), want problem+json", ct, a.status, a.body)
	}
	var p struct {
		Reason string `json:"reason"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal(a.body, &p); err != nil || p.Status != a.status {
		t.Fatalf("problem body %s does not match status %d: %v", a.body, a.status, err)
	}
	return p.Reason
}

func TestAPI_RequestErrorsAreProblems(t *testing.T) {
	t.Parallel()
	h := newHarness(t, httpapi.Config{})
	big := `{"name":"a","pad":"` + strings.Repeat("x", 1<<20) + `"}`
	cases := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		reason                   string
	}{
		{"body over 1 MiB", "POST", "/api/v1/widgets", big, nil, 413, "BODY_TOO_LARGE"},
		{"malformed JSON", "POST", "/api/v1/widgets", `{"name":`, nil, 400, "MALFORMED_JSON"},
		{"two JSON values", "POST", "/api/v1/widgets", `{"name":"a"} {"name":"b"}`, nil, 400, "MALFORMED_JSON"},
		{"wrong type", "POST", "/api/v1/widgets", `{"name":"a","size":"big"}`, nil, 400, "INVALID_ARGUMENT"},
		{"schema violation", "POST", "/api/v1/widgets", `{"name":"far-too-long-a-name"}`, nil, 400, "INVALID_ARGUMENT"},
		{"missing required field", "POST", "/api/v1/widgets", `{"size":1}`, nil, 400, "INVALID_ARGUMENT"},
		{"not JSON", "POST", "/api/v1/widgets", `name=a`, []string{"Content-Type", "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"domain error from the table", "GET", "/api/v1/widgets/x", "", nil, 404, "WIDGET_NOT_FOUND"},
		{"unknown path", "GET", "/api/v1/gadgets", "", nil, 404, "NOT_FOUND"},
		{"wrong method", "DELETE", "/api/v1/widgets", "", nil, 405, "METHOD_NOT_ALLOWED"},
		{"custom method with GET", "GET", "/api/v1/widgets/a:frob", "", nil, 405, "METHOD_NOT_ALLOWED"},
		{"unknown custom method", "POST", "/api/v1/widgets/a:polish", "", nil, 404, "NOT_FOUND"},
		{"undecodable query on a POST", "POST", "/api/v1/widgets?dry_run=%ZZ", `{"name":"a"}`, nil, 400, "INVALID_ARGUMENT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := h.do(t, tc.method, tc.path, tc.body, tc.headers...)
			if a.status != tc.status {
				t.Fatalf("status = %d, want %d; body %s", a.status, tc.status, a.body)
			}
			if got := a.reason(t); got != tc.reason {
				t.Fatalf("reason = %s, want %s; body %s", got, tc.reason, a.body)
			}
		})
	}
	if got := h.calls.Load(); got != 0 {
		t.Errorf("handler ran %d times for requests that should never reach it", got)
	}
}

func TestAPI_InvalidFieldIsNamed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, httpapi.Config{})
	a := h.do(t, "POST", "/api/v1/widgets", `{"name":"far-too-long-a-name"}`)
	var p struct {
		Fields []invalid.Field `json:"fields"`
	}
	if err := json.Unmarshal(a.body, &p); err != nil || len(p.Fields) != 1 || p.Fields[0].Field != "name" {
		t.Fatalf("fields = %+v (%v), want one naming \"name\"; body %s", p.Fields, err, a.body)
	}
}

func TestAPI_UndecodableQueryIsRefusedAndNamed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, httpapi.Config{})
	cases := []struct {
		name, method, path, body string
		// fields are the parameters the problem names; none means the
		// query is fine and the handler answers.
		fields []string
		status int
		reason string
	}{
		{name: "bad escape in a value", method: "GET", path: "/api/v1/widgets/x?max_page_size=%ZZ",
			fields: []string{"max_page_size"}, status: 400, reason: "INVALID_ARGUMENT"},
		{name: "truncated escape", method: "GET", path: "/api/v1/widgets/x?page_token=ab%2",
			fields: []string{"page_token"}, status: 400, reason: "INVALID_ARGUMENT"},
		{name: "only the bad pair is named", method: "GET", path: "/api/v1/widgets/x?show_deleted=true&filter=%G1&max_page_size=5",
			fields: []string{"filter"}, status: 400, reason: "INVALID_ARGUMENT"},
		{name: "every bad pair is named", method: "GET", path: "/api/v1/widgets/x?a=%ZZ&b=%",
			fields: []string{"a", "b"}, status: 400, reason: "INVALID_ARGUMENT"},
		{name: "bad escape in a name", method: "GET", path: "/api/v1/widgets/x?max%ZZ=1",
			fields: []string{"max%ZZ"}, status: 400, reason: "INVALID_ARGUMENT"},
		{name: "semicolon separator", method: "GET", path: "/api/v1/widgets/x?a=1;b=2",
			fields: []string{"a"}, status: 400, reason: "INVALID_ARGUMENT"},
		{name: "custom method", method: "POST", path: "/api/v1/widgets/w-1:frob?validate_only=%ZZ",
			fields: []string{"validate_only"}, status: 400, reason: "INVALID_ARGUMENT"},
		{name: "good escapes pass", method: "GET", path: "/api/v1/widgets/x?name=a%20b+c&label=k%3Av&empty=&flag",
			status: 404, reason: "WIDGET_NOT_FOUND"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := h.do(t, tc.method, tc.path, tc.body)
			if a.status != tc.status {
				t.Fatalf("status = %d, want %d; body %s", a.status, tc.status, a.body)
			}
			if got := a.reason(t); got != tc.reason {
				t.Fatalf("reason = %s, want %s; body %s", got, tc.reason, a.body)
			}
			var p struct {
				Detail string          `json:"detail"`
				Fields []invalid.Field `json:"fields"`
			}
			if err := json.Unmarshal(a.body, &p); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range p.Fields {
				got = append(got, f.Field)
				if !strings.Contains(p.Detail, f.Field+": query parameter") {
					t.Errorf("detail %q does not name the parameter %q", p.Detail, f.Field)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.fields, ",") {
				t.Fatalf("fields = %q, want %q; body %s", got, tc.fields, a.body)
			}
		})
	}
}

func TestAPI_CustomMethodRoutesToTheResource(t *testing.T) {
	t.Parallel()
	h := newHarness(t, httpapi.Config{})
	a := h.do(t, "POST", "/api/v1/widgets/w-1:frob", "")
	if a.status != 200 || !bytes.Contains(a.body, []byte(`"frobbed":"w-1"`)) {
		t.Fatalf("POST :frob = %d %s, want the handler to see widget_id w-1", a.status, a.body)
	}
}

func TestAPI_PanicBecomesOpaque500(t *testing.T) {
	t.Parallel()
	h := newHarness(t, httpapi.Config{})
	a := h.do(t, "GET", "/api/v1/widgets/boom", "", "X-Request-Id", "panic-1")
	if a.status != 500 || a.reason(t) != "INTERNAL" {
		t.Fatalf("panic answered %d %s", a.status, a.body)
	}
	if bytes.Contains(a.body, []byte("secret")) || !bytes.Contains(a.body, []byte("panic-1")) {
		t.Fatalf("500 body %s leaks the panic or lacks the request id", a.body)
	}
	// The server survives.
	if a := h.do(t, "GET", "/api/v1/widgets/x", ""); a.status != 404 {
		t.Fatalf("after a panic: %d", a.status)
	}
}

func TestETag_IfMatchVersion(t *testing.T) {
	t.Parallel()
	cases := []struct {
		header  string
		version int64
		ok      bool
		err     error
	}{
		{"", 0, false, nil},
		{"*", 0, false, nil},
		{httpapi.ETag(7), 7, true, nil},
		{`W/"7"`, 7, true, nil},
		{`"abc"`, 0, false, httpapi.ErrPreconditionFailed},
		{`"1", "2"`, 0, false, httpapi.ErrPreconditionFailed},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("PUT", "/", nil)
		if tc.header != "" {
			r.Header.Set("If-Match", tc.header)
		}
		v, ok, err := httpapi.IfMatchVersion(r)
		if v != tc.version || ok != tc.ok || !errors.Is(err, tc.err) {
			t.Errorf("If-Match %q = (%d, %v, %v), want (%d, %v, %v)", tc.header, v, ok, err, tc.version, tc.ok, tc.err)
		}
	}
}
