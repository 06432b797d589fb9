package provider_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
)

// fakeSteward is Steward's side of registration and status reports: it
// records each request and answers with the next step of its script, the
// last step repeating.
type fakeSteward struct {
	url string

	// arrived gets a value for each request (the first 100).
	arrived chan struct{}

	mu       sync.Mutex
	requests []stewardRequest
	script   []step
}

type stewardRequest struct {
	method, path, auth, contentType, body string
}

// step answers one request; hangUp closes the connection instead.
type step struct {
	status int
	body   string
	header map[string]string
	hangUp bool
}

func newFakeSteward(t *testing.T, script ...step) *fakeSteward {
	t.Helper()
	f := &fakeSteward{script: script, arrived: make(chan struct{}, 100)}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// newFakeStewardAt is newFakeSteward listening on addr, such as one
// [downAddr] returned: a Steward that comes back.
func newFakeStewardAt(t *testing.T, addr string, script ...step) *fakeSteward {
	t.Helper()
	var ln net.Listener
	poll.Until(t, "listening on "+addr, func() bool {
		var err error
		ln, err = net.Listen("tcp", addr)
		return err == nil
	})
	f := &fakeSteward{script: script, arrived: make(chan struct{}, 100)}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(f.serve)}}
	srv.Start()
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// downAddr returns an address on 127.0.0.1 where nothing listens (for
// now): connections to it are refused.
func downAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func (f *fakeSteward) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, stewardRequest{
		method: r.Method, path: r.URL.Path, auth: r.Header.Get("Authorization"),
		contentType: r.Header.Get("Content-Type"), body: string(b),
	})
	s := f.script[min(len(f.requests), len(f.script))-1]
	f.mu.Unlock()
	select {
	case f.arrived <- struct{}{}:
	default:
	}
	if s.hangUp {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		_ = conn.Close()
		return
	}
	for k, v := range s.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(s.status)
	_, _ = io.WriteString(w, s.body)
}

func (f *fakeSteward) received() []stewardRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]stewardRequest(nil), f.requests...)
}

// sleeps records the waits of a RetryPolicy and returns at once; cancel,
// when set, is called at the wait numbered cancelAt (from 1), which then
// returns the ctx's error as a real wait would.
type sleeps struct {
	mu       sync.Mutex
	waits    []time.Duration
	cancel   context.CancelFunc
	cancelAt int
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	n := len(s.waits)
	s.mu.Unlock()
	if s.cancel != nil && n == s.cancelAt {
		s.cancel()
	}
	return ctx.Err()
}

func (s *sleeps) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}
