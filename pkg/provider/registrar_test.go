package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/pkg/provider"
)

var kubevirt = provider.Registration{
	Name: "kubevirt-sp", Endpoint: "http://127.0.0.1:9001", ServiceTypes: []string{"vm"},
	Metadata: map[string]string{"region": "us-east-1"}, Capacity: map[string]int64{"vcpu": 64},
}

const registered = `{"id":"p-1","path":"providers/p-1","status":"healthy","name":"kubevirt-sp",` +
	`"endpoint":"http://127.0.0.1:9001","service_types":["vm"]}`

func newRegistrar(t *testing.T, stewardURL string, s *sleeps) *provider.Registrar {
	t.Helper()
	r, err := provider.NewRegistrar(provider.RegistrarConfig{
		StewardURL:   stewardURL,
		Token:        "s3cret",
		Registration: kubevirt,
		Retry:        provider.RetryPolicy{SleepFunc: s.sleep},
		Logger:       testLogger(t),
	})
	if err != nil {
		t.Fatalf("NewRegistrar: %v", err)
	}
	return r
}

func TestRegistrar_RetriesUntilAccepted(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t,
		step{status: 503, body: `{"status":503,"reason":"UNAVAILABLE"}`},
		step{hangUp: true},
		step{status: 500},
		step{status: 429},
		step{status: 201, body: registered},
	)
	var s sleeps
	got, err := newRegistrar(t, steward.url, &s).Register(t.Context())
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	want := provider.RegisteredProvider{
		Registration: provider.Registration{Name: "kubevirt-sp", Endpoint: "http://127.0.0.1:9001", ServiceTypes: []string{"vm"}},
		ID:           "p-1", Path: "providers/p-1", Status: "healthy", Created: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("registered: -want +got:\n%s", diff)
	}

	reqs := steward.received()
	if len(reqs) != 5 {
		t.Fatalf("%d attempts, want 5 (4 failures retried)", len(reqs))
	}
	body, _ := json.Marshal(kubevirt)
	for i, r := range reqs {
		wantReq := stewardRequest{method: "POST", path: "/api/v1/providers", auth: "Bearer s3cret", contentType: "application/json", body: string(body)}
		if diff := cmp.Diff(wantReq, r, cmp.AllowUnexported(stewardRequest{})); diff != "" {
			t.Errorf("attempt %d: -want +got:\n%s", i+1, diff)
		}
	}
	// Exponential from 200ms, each within ±20%.
	waits := s.recorded()
	if len(waits) != 4 {
		t.Fatalf("waits = %v, want 4", waits)
	}
	for i, w := range waits {
		base := 200 * time.Millisecond << i
		if w < base*8/10 || w > base*12/10 {
			t.Errorf("wait %d = %s, want %s ±20%%", i+1, w, base)
		}
	}
}

func TestRegistrar_ReregistrationIsNotCreated(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t, step{status: 200, body: registered})
	got, err := newRegistrar(t, steward.url, &sleeps{}).Register(t.Context())
	if err != nil || got.ID != "p-1" || got.Created {
		t.Errorf("Register = %+v, %v; want p-1, not created", got, err)
	}
}

func TestRegistrar_GivesUpOn4xx(t *testing.T) {
	t.Parallel()
	problem := `{"type":"x","title":"Invalid argument","status":400,"detail":"endpoint must be a URL","reason":"INVALID_ARGUMENT"}`
	steward := newFakeSteward(t, step{status: 400, body: problem})
	var s sleeps
	_, err := newRegistrar(t, steward.url, &s).Register(t.Context())
	var re *provider.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 400 || string(re.Body) != problem {
		t.Fatalf("err = %v, want a 400 ResponseError with the problem body", err)
	}
	if p, ok := re.Problem(); !ok || p.Reason != "INVALID_ARGUMENT" {
		t.Errorf("Problem() = %+v, %v", p, ok)
	}
	if n := len(steward.received()); n != 1 || len(s.recorded()) != 0 {
		t.Errorf("%d attempts and %d waits, want 1 and none: a 4xx is final", n, len(s.recorded()))
	}
}

func TestRegistrar_StopsWhenCtxEnds(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t, step{status: 503})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := sleeps{cancel: cancel, cancelAt: 3}
	_, err := newRegistrar(t, steward.url, &s).Register(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	var re *provider.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 503 {
		t.Errorf("err = %v, want the last attempt's 503 in it", err)
	}
	if n := len(steward.received()); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
}

func TestRegistrar_HonoursRetryAfterUpToMax(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t,
		step{status: 429, header: map[string]string{"Retry-After": "2"}},
		step{status: 503, header: map[string]string{"Retry-After": "3600"}},
		step{status: 201, body: registered},
	)
	var s sleeps
	if _, err := newRegistrar(t, steward.url, &s).Register(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{2 * time.Second, 30 * time.Second}, s.recorded()); diff != "" {
		t.Errorf("waits: -want +got:\n%s", diff)
	}
}

func TestRegistrar_AnswerWithoutID(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t, step{status: 201, body: `{"name":"kubevirt-sp"}`})
	_, err := newRegistrar(t, steward.url, &sleeps{}).Register(t.Context())
	if !errors.Is(err, provider.ErrInvalidResponse) || len(steward.received()) != 1 {
		t.Errorf("err = %v after %d attempts, want ErrInvalidResponse after 1", err, len(steward.received()))
	}
}

func TestNewRegistrar_RefusesBadConfig(t *testing.T) {
	t.Parallel()
	tests := map[string]provider.RegistrarConfig{
		"NoURL":          {Registration: kubevirt},
		"RelativeURL":    {StewardURL: "steward:8080", Registration: kubevirt},
		"NoName":         {StewardURL: "http://127.0.0.1:8080", Registration: provider.Registration{Endpoint: "http://x", ServiceTypes: []string{"vm"}}},
		"NoServiceTypes": {StewardURL: "http://127.0.0.1:8080", Registration: provider.Registration{Name: "x", Endpoint: "http://x"}},
	}
	for name, cfg := range tests {
		if _, err := provider.NewRegistrar(cfg); err == nil {
			t.Errorf("%s: NewRegistrar accepted %+v", name, cfg)
		}
	}
}

// The default wait is a real timer; a done ctx ends it at once.
func TestRegistrar_DefaultSleepEndsWithCtx(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t, step{status: http.StatusServiceUnavailable})
	r, err := provider.NewRegistrar(provider.RegistrarConfig{
		StewardURL: steward.url, Registration: kubevirt,
		Retry: provider.RetryPolicy{Initial: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { _, err := r.Register(ctx); errc <- err }()
	select {
	case <-steward.arrived: // the first attempt; the wait of an hour follows
	case <-time.After(10 * time.Second):
		t.Fatal("no attempt within 10s")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// The caller's logger names the component; the registrar's lines must not
// carry a second "component" (a JSON line with a key twice).
func TestRegistrar_LogLinesHaveEachKeyOnce(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t, step{status: 503}, step{status: 201, body: registered})
	var buf syncBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil)).With("component", "processprovider", "provider", "kubevirt-sp")
	var s sleeps
	r, err := provider.NewRegistrar(provider.RegistrarConfig{StewardURL: steward.url, Registration: kubevirt,
		Retry: provider.RetryPolicy{SleepFunc: s.sleep}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(t.Context()); err != nil {
		t.Fatalf("Register: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("want a line for the retry and one for the registration, got %q", buf.String())
	}
	for _, line := range lines {
		if n := strings.Count(line, `"component":`); n != 1 {
			t.Errorf("log line has component %d times: %s", n, line)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
