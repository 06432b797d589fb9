// Package providertest runs a real in-process service provider for tests:
// an in-memory [provider.Provider] served by [provider.NewServer] on
// 127.0.0.1, which records every call Steward makes and has knobs to make it
// fail, hang or vanish. Production code never imports it.
package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// The methods a [Call] records.
const (
	MethodCreate = "create"
	MethodGet    = "get"
	MethodDelete = "delete"
	MethodHealth = "health"
)

// Call is one request that reached the provider (before its token is
// checked: a refused request is recorded too).
type Call struct {
	// Method is MethodCreate, MethodGet, MethodDelete or MethodHealth.
	Method     string
	InstanceID string
	// ServiceType, Spec and Metadata are the create request's.
	ServiceType string
	Spec        map[string]any
	Metadata    provider.CreateMetadata
	// IdempotencyKey is the Idempotency-Key header, if any.
	IdempotencyKey string
}

// Config configures [New]; every field is optional.
type Config struct {
	// Token, when set, is required as a bearer token (see
	// [provider.ServerConfig.Token]).
	Token string
	// Logger receives the server's logs. Defaults to t.Output().
	Logger *slog.Logger
}

// Server is a running provider, built by [New]. Its methods are safe for
// concurrent use.
type Server struct {
	srv *httptest.Server

	// closed is closed at cleanup, releasing blocked creates.
	closed chan struct{}

	mu sync.Mutex
	// instances holds the provider's instances by id.
	instances map[string]provider.Instance
	calls     []Call
	// changed is closed and replaced whenever a call is recorded.
	changed     chan struct{}
	failCreate  *failure
	failDeletes int
	unhealthy   bool
	down        bool
	// unblock, when not nil, holds every create until it is closed.
	unblock chan struct{}
}

type failure struct {
	status int
	body   string
}

// New starts a provider on 127.0.0.1, stopped at t's cleanup; adjust, when
// given, changes the config first.
func New(t testing.TB, adjust ...func(*Config)) *Server {
	t.Helper()
	cfg := Config{}
	for _, f := range adjust {
		f(&cfg)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	s := &Server{
		closed:    make(chan struct{}),
		instances: make(map[string]provider.Instance),
		changed:   make(chan struct{}),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("providertest: listen: %v", err)
	}
	h := provider.NewServer(&memProvider{s: s}, provider.ServerConfig{Logger: cfg.Logger, Token: cfg.Token})
	s.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: s.intercept(h)}}
	s.srv.Start()
	t.Cleanup(func() {
		close(s.closed) // first, or Close would wait for blocked creates
		s.srv.Close()
	})
	return s
}

// URL returns the provider's endpoint, "http://127.0.0.1:<port>".
func (s *Server) URL() string { return s.srv.URL }

// Registration returns a registration of this provider under name.
func (s *Server) Registration(name string, serviceTypes ...string) provider.Registration {
	return provider.Registration{Name: name, Endpoint: s.URL(), ServiceTypes: serviceTypes}
}

// intercept records each request and plays the transport-level knobs
// before h, the real provider server, sees it.
func (s *Server) intercept(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		down, fail := s.down, s.failCreate
		s.mu.Unlock()
		if down {
			hangUp(w)
			return
		}
		call, ok := s.record(r)
		if ok && call.Method == MethodCreate && fail != nil {
			s.answerRaw(w, fail)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// record parses r into a Call and records it; ok is false for a path that
// is not a provider call. The body is put back for the real server.
func (s *Server) record(r *http.Request) (Call, bool) {
	c := Call{IdempotencyKey: r.Header.Get("Idempotency-Key")}
	switch {
	case r.URL.Path == "/api/v1/health" && r.Method == http.MethodGet:
		c.Method = MethodHealth
	case r.URL.Path == "/api/v1/services" && r.Method == http.MethodPost:
		c.Method = MethodCreate
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
		var req provider.CreateRequest
		_ = json.Unmarshal(b, &req) // the real server answers a bad body
		c.InstanceID, c.ServiceType, c.Spec, c.Metadata = req.InstanceID, req.ServiceType, req.Spec, req.Metadata
	default:
		rest, found := strings.CutPrefix(r.URL.Path, "/api/v1/services/")
		if !found || rest == "" || strings.Contains(rest, "/") {
			return Call{}, false
		}
		c.InstanceID = rest
		switch r.Method {
		case http.MethodGet:
			c.Method = MethodGet
		case http.MethodDelete:
			c.Method = MethodDelete
		default:
			return Call{}, false
		}
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	return c, true
}

// answerRaw writes a FailCreate answer: its body verbatim, or a problem
// when it has none.
func (s *Server) answerRaw(w http.ResponseWriter, f *failure) {
	body, ct := f.body, "text/plain; charset=utf-8"
	switch {
	case body == "":
		body = fmt.Sprintf(`{"status":%d,"reason":"INJECTED_FAILURE","detail":"providertest: FailCreate"}`, f.status)
		ct = "application/problem+json"
	case json.Valid([]byte(body)):
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(f.status)
	_, _ = io.WriteString(w, body)
}

// hangUp closes the connection without an answer, as a crashed provider
// would: the client sees a transport error.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // closes the connection too
	}
	_ = conn.Close()
}

// Calls returns every call recorded so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Creates returns the create calls recorded so far, in order.
func (s *Server) Creates() []Call { return s.callsOf(MethodCreate) }

// Deletes returns the delete calls recorded so far, in order.
func (s *Server) Deletes() []Call { return s.callsOf(MethodDelete) }

func (s *Server) callsOf(method string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// WaitForCall waits up to 10 seconds for a call of method on instance id
// (any instance when id is "") and returns the first one; it fails t if
// none comes.
func (s *Server) WaitForCall(t testing.TB, method, id string) Call {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		changed := s.changed
		for _, c := range s.calls {
			if c.Method == method && (id == "" || c.InstanceID == id) {
				s.mu.Unlock()
				return c
			}
		}
		s.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("providertest: no %s call for instance %q within 10s; calls: %+v", method, id, s.Calls())
		}
	}
}

// Instances returns the instances the provider holds, by id.
func (s *Server) Instances() map[string]provider.Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]provider.Instance, len(s.instances))
	for id, inst := range s.instances {
		out[id] = inst
	}
	return out
}

// Report sets instance id's status (when the provider holds it) and sends a
// report of it, observed now, through r: what a provider does once its
// backend has acted. It returns r's error.
func (s *Server) Report(ctx context.Context, r provider.StatusReporter, id string, status provider.Status) error {
	s.mu.Lock()
	if inst, ok := s.instances[id]; ok {
		inst.Status = status
		s.instances[id] = inst
	}
	s.mu.Unlock()
	return r.Report(ctx, provider.StatusReport{InstanceID: id, Status: status, ObservedTime: time.Now().UTC()})
}
