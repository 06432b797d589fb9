// Package apitest runs the whole Steward server on 127.0.0.1 for HTTP-level
// tests: a real store (SQLite or PostgreSQL, from storetest), the embedded
// NATS server, River, and the real HTTP stack. Production code never imports it.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Server is a started server and a client for it.
type Server struct {
	*server.Server
	cfg server.Config
	// client is this server's own, so that its connections end with the
	// test (goleak in TestMain counts a pooled one as a leak).
	client *http.Client
}

// Start runs a dev-mode server on a fresh database of engine; adjust, when
// given, changes the config first. The server stops at cleanup.
func Start(t testing.TB, engine store.Engine, adjust ...func(*server.Config)) *Server {
	t.Helper()
	sc := storetest.MigratedConfig(t, engine, server.Migrators()...)
	cfg := server.Config{
		Dev:         true,
		Listen:      "127.0.0.1:0",
		DataDir:     sc.DataDir,
		DatabaseURL: sc.DatabaseURL,
		Logger:      slog.New(slog.NewTextHandler(logOutput(t), &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir() // the embedded NATS store
	}
	for _, f := range adjust {
		f(&cfg)
	}
	return start(t, cfg)
}

// logOutput is where a test's server logs: with -v the test's output as
// it goes; otherwise a buffer printed at the end, only if the test failed,
// so that a failure's message comes before the server's log and not
// somewhere in the middle of thousands of lines.
func logOutput(t testing.TB) io.Writer {
	if testing.Verbose() {
		return t.Output()
	}
	b := &Buffer{}
	t.Cleanup(func() { // registered before the server's stop: runs after it
		if t.Failed() {
			b.mu.Lock()
			defer b.mu.Unlock()
			_, _ = io.WriteString(t.Output(), "--- the server's log:\n")
			_, _ = b.buf.WriteTo(t.Output())
		}
	})
	return b
}

// Buffer is a bytes.Buffer safe for concurrent use: a server's log.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func start(t testing.TB, cfg server.Config) *Server {
	t.Helper()
	s, err := server.New(cfg)
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(client.CloseIdleConnections)
	return &Server{Server: s, cfg: cfg, client: client}
}

// Restart stops the server and starts a new one on the same data dir and
// database, as a process restart would; adjust, when given, changes the
// config first.
func (s *Server) Restart(t testing.TB, adjust ...func(*server.Config)) *Server {
	t.Helper()
	if err := s.Stop(context.Background()); err != nil {
		t.Fatalf("stop server: %v", err)
	}
	cfg := s.cfg
	for _, f := range adjust {
		f(&cfg)
	}
	return start(t, cfg)
}

// Fast shortens the server's provider and cleanup timings, so tests that
// wait on a health check or a cleanup pass wait about 100ms.
func Fast(c *server.Config) {
	c.HealthInterval = 100 * time.Millisecond
	c.ProviderFailureThreshold = 2
	c.CleanupInterval = 100 * time.Millisecond
	c.ProviderTimeout = 2 * time.Second
}

// ReportStatus sends a provider's status report for an instance, observed
// now (PUT /api/v1/service-type-instances/{id}/status), and wants 200.
func (s *Server) ReportStatus(t testing.TB, instanceID, status string) {
	t.Helper()
	s.Do(t, "PUT", "/api/v1/service-type-instances/"+instanceID+"/status", map[string]any{
		"status": status, "observed_time": time.Now().UTC().Format(time.RFC3339Nano),
	}).Want(t, http.StatusOK)
}

// Response is an answer read in full.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request; body is JSON-encoded unless it is []byte or nil.
// headers come in name, value pairs.
func (s *Server) Do(t testing.TB, method, path string, body any, headers ...string) *Response {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("encode body: %v", err)
		}
		r = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, s.URL()+path, r)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", method, path, err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// JSON decodes the body into v, failing the test if it cannot.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Want fails the test unless the status is want.
func (r *Response) Want(t testing.TB, want int) *Response {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status = %d, want %d; body: %s", r.Status, want, r.Body)
	}
	return r
}

// Problem is the body of an error answer.
type Problem struct {
	Type     string           `json:"type"`
	Title    string           `json:"title"`
	Status   int              `json:"status"`
	Detail   string           `json:"detail"`
	Instance string           `json:"instance"`
	Reason   string           `json:"reason"`
	Fields   []map[string]any `json:"fields"`
	// Extra holds every member of the body, the extensions included
	// (next_safe_action, suggested_actions).
	Extra map[string]any `json:"-"`
}

// WantProblem fails the test unless the answer is a problem+json with the
// status and reason, and returns it.
func (r *Response) WantProblem(t testing.TB, status int, reason string) Problem {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json; status %d, body %s", ct, r.Status, r.Body)
	}
	var p Problem
	r.JSON(t, &p)
	r.JSON(t, &p.Extra)
	if r.Status != status || p.Status != status || p.Reason != reason {
		t.Fatalf("got %d %s (body status %d), want %d %s; body: %s", r.Status, p.Reason, p.Status, status, reason, r.Body)
	}
	return p
}
