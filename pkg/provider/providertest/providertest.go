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
	MethodUpdate = "update"
	MethodDelete = "delete"
	MethodHealth = "health"
	MethodRepair = "repair"
)

// Call is one request that reached the provider (before its token is
// checked: a refused request is recorded too).
type Call struct {
	// Method is MethodCreate, MethodGet, MethodUpdate, MethodDelete or
	// MethodHealth. An update is recorded even when the server does not
	// serve updates and answers 405 (see [Config.Update]).
	Method     string
	InstanceID string
	// ServiceType and Spec are the create or update request's (for an
	// update, the new spec); Metadata is the create request's.
	ServiceType string
	Spec        map[string]any
	Metadata    provider.CreateMetadata
	// IdempotencyKey is the Idempotency-Key header, if any.
	IdempotencyKey string
	// Repair is a repair call's request.
	Repair *provider.RepairRequest
}

// Config configures [New]; every field is optional.
type Config struct {
	// Token, when set, is required as a bearer token (see
	// [provider.ServerConfig.Token]).
	Token string
	// Logger receives the server's logs. Defaults to t.Output().
	Logger *slog.Logger
	// Update, when true, makes the provider serve in-place updates
	// (implement [provider.Updater]) and list [provider.OperationUpdate] in
	// [Server.Registration]. Defaults to false: like a provider without the
	// operation, it answers PUT with 405, and Steward must replace.
	Update bool
	// Repair, when true, makes the provider accept repair operations
	// (implement [provider.Repairer]: it records them and answers 202, the
	// test plays the worker) and list [provider.OperationRepair] in
	// [Server.Registration].
	Repair bool
}

// Server is a running provider, built by [New]. Its methods are safe for
// concurrent use.
type Server struct {
	srv *httptest.Server
	// updates is Config.Update, repairs Config.Repair.
	updates bool
	repairs bool

	// closed is closed at cleanup, releasing blocked creates.
	closed chan struct{}

	mu sync.Mutex
	// instances holds the provider's instances by id, and specs their
	// specs, as created or last updated.
	instances map[string]provider.Instance
	specs     map[string]map[string]any
	calls     []Call
	// changed is closed and replaced whenever a call is recorded.
	changed     chan struct{}
	failCreate  *failure
	failUpdate  *failure
	failDeletes int
	slowDeletes bool
	failRepairs int
	unhealthy   bool
	down        bool
	// unblock, when not nil, holds every create until it is closed.
	unblock chan struct{}
	// outputs are what creates answer with (SetOutputs).
	outputs provider.Outputs
	// made are the ids of every instance a create made (Made).
	made map[string]bool
}

// failure is an answer FailCreate or FailUpdate (its knob) injects.
type failure struct {
	knob   string
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
		updates:   cfg.Update,
		repairs:   cfg.Repair,
		closed:    make(chan struct{}),
		instances: make(map[string]provider.Instance),
		specs:     make(map[string]map[string]any),
		made:      make(map[string]bool),
		changed:   make(chan struct{}),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("providertest: listen: %v", err)
	}
	// Only the wrapper has Update, so NewServer serves PUT only with it.
	m := &memProvider{s: s}
	var p provider.Provider = m
	switch {
	case cfg.Update && cfg.Repair:
		p = &updatingRepairingProvider{&updatingProvider{m}}
	case cfg.Update:
		p = &updatingProvider{m}
	case cfg.Repair:
		p = &repairingProvider{m}
	}
	h := provider.NewServer(p, provider.ServerConfig{Logger: cfg.Logger, Token: cfg.Token})
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

// Registration returns a registration of this provider under name. Its
// Operations list [provider.OperationUpdate] when [Config.Update] is set, and
// are empty otherwise.
func (s *Server) Registration(name string, serviceTypes ...string) provider.Registration {
	reg := provider.Registration{Name: name, Endpoint: s.URL(), ServiceTypes: serviceTypes}
	if s.updates {
		reg.Operations = append(reg.Operations, provider.OperationUpdate)
	}
	if s.repairs {
		reg.Operations = append(reg.Operations, provider.OperationRepair)
	}
	return reg
}

// intercept records each request and plays the transport-level knobs
// before h, the real provider server, sees it.
func (s *Server) intercept(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		down, failCreate, failUpdate := s.down, s.failCreate, s.failUpdate
		s.mu.Unlock()
		if down {
			hangUp(w)
			return
		}
		call, ok := s.record(r)
		switch {
		case ok && call.Method == MethodCreate && failCreate != nil:
			s.answerRaw(w, failCreate)
			return
		case ok && call.Method == MethodUpdate && failUpdate != nil && s.updates:
			// Without updates served, the 405 is the answer to see.
			s.answerRaw(w, failUpdate)
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
		var req provider.CreateRequest
		peekJSON(r, &req)
		c.InstanceID, c.ServiceType, c.Spec, c.Metadata = req.InstanceID, req.ServiceType, req.Spec, req.Metadata
	default:
		rest, found := strings.CutPrefix(r.URL.Path, "/api/v1/services/")
		if id, ok := strings.CutSuffix(rest, "/repair"); found && ok && r.Method == http.MethodPost {
			var req provider.RepairRequest
			peekJSON(r, &req)
			c.Method, c.InstanceID, c.Repair = MethodRepair, id, &req
			break
		}
		if !found || rest == "" || strings.Contains(rest, "/") {
			return Call{}, false
		}
		c.InstanceID = rest
		switch r.Method {
		case http.MethodGet:
			c.Method = MethodGet
		case http.MethodPut:
			c.Method = MethodUpdate
			var req provider.UpdateRequest
			peekJSON(r, &req)
			c.ServiceType, c.Spec = req.ServiceType, req.Spec
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

// peekJSON decodes r's body into dst, if it can, and puts the body back for
// the real server, which answers a bad one.
func peekJSON(r *http.Request, dst any) {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
	_ = json.Unmarshal(b, dst)
}

// answerRaw writes a FailCreate or FailUpdate answer: its body verbatim, or
// a problem when it has none.
func (s *Server) answerRaw(w http.ResponseWriter, f *failure) {
	body, ct := f.body, "text/plain; charset=utf-8"
	switch {
	case body == "":
		body = fmt.Sprintf(`{"status":%d,"reason":"INJECTED_FAILURE","detail":"providertest: %s"}`, f.status, f.knob)
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

// Updates returns the update calls recorded so far, in order, each with
// the new spec.
func (s *Server) Updates() []Call { return s.callsOf(MethodUpdate) }

// Repairs returns the repair calls recorded so far, in order.
func (s *Server) Repairs() []Call { return s.callsOf(MethodRepair) }

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

// Made reports whether a create made instance id, whether or not the
// provider still holds it: a test tells "not made yet" from "made and
// deleted since".
func (s *Server) Made(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.made[id]
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
