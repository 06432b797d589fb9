package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/pkg/client"
	"github.com/stewardhq/steward/pkg/provider"
)

// The calls to Steward (Registrar, HTTPReporter) go through pkg/client's
// generated methods; these tests pin what they send and how their failures
// read, as the package's own transport did before.

// rawRequest is what a Steward call put on the wire.
type rawRequest struct {
	method, path string // path as sent, escapes kept
	header       http.Header
	body         string
}

// rawSteward answers every request with status and body, and records it.
type rawSteward struct {
	url string

	mu   sync.Mutex
	reqs []rawRequest
}

func newRawSteward(t *testing.T, status int, body string) *rawSteward {
	t.Helper()
	s := &rawSteward{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, rawRequest{method: r.Method, path: r.URL.EscapedPath(), header: r.Header.Clone(), body: string(b)})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *rawSteward) received() []rawRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]rawRequest(nil), s.reqs...)
}

// stewardCall is one of the package's calls to Steward, made against the
// Steward at base with cfg's client settings.
type stewardCall struct {
	name string
	call func(ctx context.Context, base string, cfg callConfig) error
}

type callConfig struct {
	hc      *http.Client
	timeout time.Duration
}

var runtimeReport = provider.RuntimeReport{RuntimeState: provider.RuntimeState{Health: provider.RuntimeHealthy}, ObservedTime: observed}

var repairReport = provider.RepairReport{Status: provider.RepairRunning,
	Steps: []provider.RepairStep{{Name: provider.StepPrecheck, Status: provider.RepairSucceeded}}}

func repairRequest(reportPath string) provider.RepairRequest {
	return provider.RepairRequest{InstanceID: "i-1", OperationID: "op-1", ReportPath: reportPath, Token: "op-token"}
}

func reporter(base string, cfg callConfig) *provider.HTTPReporter {
	return &provider.HTTPReporter{StewardURL: base, Token: "s3cret", HTTPClient: cfg.hc, Timeout: cfg.timeout,
		Retry: provider.RetryPolicy{MaxAttempts: 1}}
}

// stewardCalls are every call to Steward, each made once (no retries).
var stewardCalls = []stewardCall{
	{name: "Register", call: func(ctx context.Context, base string, cfg callConfig) error {
		r, err := provider.NewRegistrar(provider.RegistrarConfig{StewardURL: base, Token: "s3cret", Registration: kubevirt,
			HTTPClient: cfg.hc, Timeout: cfg.timeout, Retry: provider.RetryPolicy{MaxAttempts: 1}})
		if err != nil {
			return err
		}
		_, err = r.Register(ctx)
		return err
	}},
	{name: "Report", call: func(ctx context.Context, base string, cfg callConfig) error {
		return reporter(base, cfg).Report(ctx, provider.StatusReport{InstanceID: "i-1", Status: provider.StatusRunning, ObservedTime: observed})
	}},
	{name: "ReportRuntime", call: func(ctx context.Context, base string, cfg callConfig) error {
		return reporter(base, cfg).ReportRuntime(ctx, "p-1", "a-1", runtimeReport)
	}},
	{name: "ReportRepair", call: func(ctx context.Context, base string, cfg callConfig) error {
		return reporter(base, cfg).ReportRepair(ctx,
			repairRequest("/api/v1/projects/p-1/app-instances/a-1/repair-operations/op-1/report"), repairReport)
	}},
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStewardCalls_SendTheContract(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		base   string // appended to the server's URL
		call   func(ctx context.Context, base string) error
		want   rawRequest // header: the headers checked
		reason string
	}{
		{
			name: "Register", base: "",
			call: func(ctx context.Context, base string) error {
				return stewardCalls[0].call(ctx, base, callConfig{})
			},
			want: rawRequest{method: "POST", path: "/api/v1/providers", body: mustJSON(t, kubevirt),
				header: http.Header{"Authorization": {"Bearer s3cret"}}},
			reason: "the registration is POSTed as the package's own Registration",
		},
		{
			name: "ReportEscapesTheID", base: "/steward/",
			call: func(ctx context.Context, base string) error {
				return reporter(base, callConfig{}).Report(ctx, provider.StatusReport{InstanceID: "a b/c", Status: provider.StatusFailed,
					Message: "lost", ObservedTime: observed})
			},
			want: rawRequest{method: "PUT", path: "/steward/api/v1/service-type-instances/a%20b%2Fc/status",
				body:   `{"status":"FAILED","message":"lost","observed_time":"2026-03-01T12:30:00Z"}`,
				header: http.Header{"Authorization": {"Bearer s3cret"}}},
			reason: "the id is one escaped segment, below the base URL's path prefix",
		},
		{
			name: "ReportRuntime", base: "/steward",
			call: func(ctx context.Context, base string) error {
				return reporter(base, callConfig{}).ReportRuntime(ctx, "team a", "a-1", runtimeReport)
			},
			want: rawRequest{method: "PUT", path: "/steward/api/v1/projects/team%20a/app-instances/a-1/runtime",
				body: mustJSON(t, runtimeReport), header: http.Header{"Authorization": {"Bearer s3cret"}}},
			reason: "the runtime is PUT to the app instance's runtime",
		},
		{
			name: "ReportRepairRoute", base: "/steward",
			call: func(ctx context.Context, base string) error {
				return reporter(base, callConfig{}).ReportRepair(ctx,
					repairRequest("/api/v1/projects/team%20a/app-instances/a-1/repair-operations/op-1/report"), repairReport)
			},
			want: rawRequest{method: "POST", path: "/steward/api/v1/projects/team%20a/app-instances/a-1/repair-operations/op-1/report",
				body: mustJSON(t, repairReport), header: http.Header{"Authorization": {"Bearer op-token"}}},
			reason: "a repair report goes to its report path, with the operation's token",
		},
		{
			name: "ReportRepairOtherPath", base: "/steward",
			call: func(ctx context.Context, base string) error {
				return reporter(base, callConfig{}).ReportRepair(ctx, repairRequest("/api/v2/repairs/op-1:report"), repairReport)
			},
			want: rawRequest{method: "POST", path: "/steward/api/v2/repairs/op-1:report",
				body: mustJSON(t, repairReport), header: http.Header{"Authorization": {"Bearer op-token"}}},
			reason: "the report path is Steward's to choose: one of no known route is posted to as it is",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			steward := newRawSteward(t, http.StatusOK, `{"id":"p-1"}`)
			if err := tc.call(t.Context(), steward.url+tc.base); err != nil {
				t.Fatalf("%s\ncall: %v", tc.reason, err)
			}
			reqs := steward.received()
			if len(reqs) != 1 {
				t.Fatalf("%s\n%d requests, want 1", tc.reason, len(reqs))
			}
			got := reqs[0]
			want := tc.want
			want.header.Set("Accept", "application/json, application/problem+json")
			want.header.Set("Content-Type", "application/json")
			want.header.Set("User-Agent", client.UserAgent)
			want.header.Set("Idempotency-Key", "")
			checked := http.Header{}
			for k := range want.header {
				checked.Set(k, got.header.Get(k))
			}
			got.header = checked
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(rawRequest{})); diff != "" {
				t.Errorf("%s\nrequest: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestStewardCalls_WithoutTokenSendNoAuthorization(t *testing.T) {
	t.Parallel()
	steward := newRawSteward(t, http.StatusNoContent, "")
	h := &provider.HTTPReporter{StewardURL: steward.url}
	if err := h.Report(t.Context(), provider.StatusReport{InstanceID: "i-1", Status: provider.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	if auth, ok := steward.received()[0].header["Authorization"]; ok {
		t.Errorf("Authorization %q sent without a token", auth)
	}
}

func TestStewardCalls_DoNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.RedirectHandler(other.URL+"/api/v1/providers", http.StatusTemporaryRedirect))
	t.Cleanup(srv.Close)
	for _, sc := range stewardCalls {
		// An http.Client of the caller's own, which would follow.
		err := sc.call(t.Context(), srv.URL, callConfig{hc: &http.Client{}})
		var re *provider.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusTemporaryRedirect {
			t.Errorf("%s: err = %v, want a 307 ResponseError", sc.name, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}

// blockingSteward holds every request until its client goes away, and
// signals each arrival on arrived.
func blockingSteward(t *testing.T) (url string, arrived <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		// NOTE: the server sees the client go away only once the body is
		// read; until then r's ctx would never end, nor Close.
		_, _ = io.Copy(io.Discard, r.Body)
		ch <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, ch
}

func TestStewardCalls_TimeoutIsErrTimeout(t *testing.T) {
	t.Parallel()
	url, _ := blockingSteward(t)
	for _, sc := range stewardCalls {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			wantOnly(t, sc.call(t.Context(), url, callConfig{timeout: 50 * time.Millisecond}), isTimeout)
		})
	}
}

func TestStewardCalls_CallerCancelIsNotATimeout(t *testing.T) {
	t.Parallel()
	for _, sc := range stewardCalls {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			url, arrived := blockingSteward(t)
			ctx, cancel := context.WithCancel(t.Context())
			errc := make(chan error, 1)
			go func() { errc <- sc.call(ctx, url, callConfig{}) }()
			select {
			case <-arrived:
			case <-time.After(10 * time.Second):
				t.Fatal("no request within 10s")
			}
			cancel()
			wantOnly(t, <-errc, isCanceled)
		})
	}
}

func TestStewardCalls_UnreachableOnClosedPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	for _, sc := range stewardCalls {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			wantOnly(t, sc.call(t.Context(), url, callConfig{}), isUnreachable)
		})
	}
}

func TestStewardCalls_AnswersAreCappedAt1MiB(t *testing.T) {
	t.Parallel()
	huge := `{"id":"p-1","name":"` + strings.Repeat("a", 1<<20) + `"}`

	accepted := newRawSteward(t, http.StatusCreated, huge)
	err := stewardCalls[0].call(t.Context(), accepted.url, callConfig{})
	wantOnly(t, err, isInvalidResponse)

	refused := newRawSteward(t, http.StatusBadRequest, huge)
	for _, sc := range stewardCalls {
		err := sc.call(t.Context(), refused.url, callConfig{})
		var re *provider.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest || len(re.Body) != 1<<20 {
			t.Errorf("%s: err = %v, want a 400 ResponseError with the first 1 MiB of the body", sc.name, err)
		}
	}
}

func TestHTTPReporter_RefusesIDsThatAreNoPathSegment(t *testing.T) {
	t.Parallel()
	steward := newRawSteward(t, http.StatusNoContent, "")
	h := &provider.HTTPReporter{StewardURL: steward.url}
	for _, id := range []string{".", ".."} {
		if err := h.Report(t.Context(), provider.StatusReport{InstanceID: id, Status: provider.StatusRunning}); !errors.Is(err, provider.ErrInvalidReport) {
			t.Errorf("Report of instance %q: err = %v, want ErrInvalidReport", id, err)
		}
		if err := h.ReportRuntime(t.Context(), id, "a-1", runtimeReport); !errors.Is(err, provider.ErrInvalidReport) {
			t.Errorf("ReportRuntime of project %q: err = %v, want ErrInvalidReport", id, err)
		}
		if err := h.ReportRuntime(t.Context(), "p-1", id, runtimeReport); !errors.Is(err, provider.ErrInvalidReport) {
			t.Errorf("ReportRuntime of app instance %q: err = %v, want ErrInvalidReport", id, err)
		}
	}
	if n := len(steward.received()); n != 0 {
		t.Errorf("%d reports sent, want none: a dot segment would resolve to another resource", n)
	}
}

func TestHTTPReporter_RefusesABadStewardURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "steward:8080", "ftp://steward", "http://steward/?x=1"} {
		h := &provider.HTTPReporter{StewardURL: u}
		err := h.Report(t.Context(), provider.StatusReport{InstanceID: "i-1", Status: provider.StatusRunning})
		if err == nil || errors.Is(err, provider.ErrUnreachable) || errors.Is(err, provider.ErrTimeout) {
			t.Errorf("StewardURL %q: err = %v, want a configuration error", u, err)
		}
	}
}
