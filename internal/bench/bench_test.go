package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitLimit bounds how long a test waits for something that should happen
// at once; reaching it means the code under test is stuck.
const waitLimit = 30 * time.Second

// newServer starts handler on 127.0.0.1 and closes it when the test ends.
func newServer(t testing.TB, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

// counting returns a handler that answers 200 and counts what it answered.
func counting(n *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, `{"status":"ok"}`)
	}
}

// runAsync runs Run in a goroutine, and returns a function that waits for it,
// failing the test if it does not return within waitLimit.
func runAsync(t testing.TB, ctx context.Context, cfg Config) func() (Result, error) {
	t.Helper()
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Run(ctx, cfg)
		done <- outcome{res, err}
	}()
	return func() (Result, error) {
		t.Helper()
		select {
		case o := <-done:
			return o.res, o.err
		case <-time.After(waitLimit):
			t.Fatalf("Run did not return within %s", waitLimit)
			return Result{}, nil
		}
	}
}

func TestRun_RequestsSendsExactlyN(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := newServer(t, counting(&served))

	res, err := Run(t.Context(), Config{
		TargetURL:   srv.URL,
		Path:        "/api/v1/health",
		Requests:    1000,
		Concurrency: 8,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := served.Load(); got != 1000 {
		t.Errorf("server saw %d requests, want 1000", got)
	}
	want := Result{
		Method:       http.MethodGet,
		Target:       srv.URL + "/api/v1/health",
		Concurrency:  8,
		Requests:     1000,
		StatusCounts: map[int]int{200: 1000},
	}
	got := res
	got.Duration, got.Throughput, got.Latency = 0, 0, Latency{}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Result (-want +got):\n%s", diff)
	}
	l := res.Latency
	if l.P50 <= 0 || l.P50 > l.P95 || l.P95 > l.P99 || l.P99 > l.Max || l.Mean > l.Max {
		t.Errorf("Latency = %+v, want 0 < p50 <= p95 <= p99 <= max and mean <= max", l)
	}
	if res.Duration <= 0 || res.Throughput <= 0 {
		t.Errorf("Duration = %s, Throughput = %f, want both positive", res.Duration, res.Throughput)
	}
}

func TestRun_FewerRequestsThanClients(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := newServer(t, counting(&served))

	res, err := Run(t.Context(), Config{TargetURL: srv.URL, Requests: 3, Concurrency: 16})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Requests != 3 || res.Concurrency != 3 || served.Load() != 3 {
		t.Errorf("Requests = %d, Concurrency = %d, served = %d, want 3, 3, 3",
			res.Requests, res.Concurrency, served.Load())
	}
}

func TestRun_CountsEachStatus(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1)%2 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})

	res, err := Run(t.Context(), Config{TargetURL: srv.URL, Requests: 100, Concurrency: 4})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := map[int]int{200: 50, 503: 50}
	if diff := cmp.Diff(want, res.StatusCounts); diff != "" {
		t.Errorf("StatusCounts (-want +got):\n%s", diff)
	}
	if res.Requests != 100 || res.Errors != 0 {
		t.Errorf("Requests = %d, Errors = %d, want 100, 0", res.Requests, res.Errors)
	}
}

func TestRun_DoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})

	res, err := Run(t.Context(), Config{TargetURL: srv.URL, Requests: 10, Concurrency: 2})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(map[int]int{302: 10}, res.StatusCounts); diff != "" {
		t.Errorf("StatusCounts (-want +got):\n%s", diff)
	}
	if got := served.Load(); got != 10 {
		t.Errorf("server saw %d requests, want 10", got)
	}
}

func TestRun_RequestFuncVariesRequests(t *testing.T) {
	t.Parallel()
	type seen struct {
		method, id, key, static, contentType, body string
	}
	var mu sync.Mutex
	var got []seen
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, seen{
			method:      r.Method,
			id:          r.URL.Query().Get("id"),
			key:         r.Header.Get("Idempotency-Key"),
			static:      r.Header.Get("X-Static"),
			contentType: r.Header.Get("Content-Type"),
			body:        string(body),
		})
		w.WriteHeader(http.StatusCreated)
	})

	const n = 200
	res, err := Run(t.Context(), Config{
		TargetURL:   srv.URL,
		Method:      http.MethodPost,
		Path:        "/api/v1/items",
		Body:        []byte(`{"default":true}`),
		Headers:     map[string]string{"X-Static": "s", "Idempotency-Key": "overridden"},
		Requests:    n,
		Concurrency: 8,
		RequestFunc: func(i int) (string, []byte, http.Header) {
			h := http.Header{}
			h.Set("Idempotency-Key", fmt.Sprintf("key-%d", i))
			return fmt.Sprintf("/api/v1/items?id=%d", i), fmt.Appendf(nil, `{"n":%d}`, i), h
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(map[int]int{201: n}, res.StatusCounts); diff != "" {
		t.Errorf("StatusCounts (-want +got):\n%s", diff)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Fatalf("server saw %d requests, want %d", len(got), n)
	}
	keys := map[string]bool{}
	for _, s := range got {
		i, err := strconv.Atoi(s.id)
		if err != nil {
			t.Fatalf("id %q is not a number", s.id)
		}
		want := seen{
			method:      http.MethodPost,
			id:          s.id,
			key:         fmt.Sprintf("key-%d", i),
			static:      "s",
			contentType: "application/json",
			body:        fmt.Sprintf(`{"n":%d}`, i),
		}
		if diff := cmp.Diff(want, s, cmp.AllowUnexported(seen{})); diff != "" {
			t.Errorf("request %d (-want +got):\n%s", i, diff)
		}
		keys[s.key] = true
	}
	if len(keys) != n {
		t.Errorf("server saw %d distinct Idempotency-Key values, want %d", len(keys), n)
	}
}

func TestRun_DefaultBodyAndPathWhenRequestFuncLeavesThemEmpty(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	paths, bodies := map[string]int{}, map[string]int{}
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		paths[r.URL.Path]++
		bodies[string(body)]++
	})

	_, err := Run(t.Context(), Config{
		TargetURL:   srv.URL + "/",
		Method:      http.MethodPut,
		Path:        "/p",
		Body:        []byte(`{}`),
		Requests:    5,
		RequestFunc: func(int) (string, []byte, http.Header) { return "", nil, nil },
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(map[string]int{"/p": 5}, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{`{}`: 5}, bodies); diff != "" {
		t.Errorf("bodies (-want +got):\n%s", diff)
	}
}

func TestRun_DurationMode(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := newServer(t, counting(&served))

	res, err := Run(t.Context(), Config{TargetURL: srv.URL, Duration: 50 * time.Millisecond, Concurrency: 2})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Requests == 0 || int64(res.Requests) != served.Load() || res.StatusCounts[200] != res.Requests {
		t.Errorf("Requests = %d, served = %d, StatusCounts = %v, want equal and positive",
			res.Requests, served.Load(), res.StatusCounts)
	}
	// Clients stop starting requests at the deadline, so the measured
	// phase lasts at least Duration by construction.
	if res.Duration < 50*time.Millisecond {
		t.Errorf("Duration = %s, want at least 50ms", res.Duration)
	}
}

func TestRun_WarmupIsNotMeasured(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := newServer(t, counting(&served))
	var mu sync.Mutex
	ns := map[int]bool{}

	res, err := Run(t.Context(), Config{
		TargetURL:   srv.URL,
		Requests:    50,
		Concurrency: 4,
		Warmup:      20 * time.Millisecond,
		RequestFunc: func(n int) (string, []byte, http.Header) {
			mu.Lock()
			defer mu.Unlock()
			ns[n] = true
			return "", nil, nil
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Requests != 50 || res.StatusCounts[200] != 50 {
		t.Errorf("Requests = %d, StatusCounts = %v, want 50 answered with 200", res.Requests, res.StatusCounts)
	}
	mu.Lock()
	defer mu.Unlock()
	total := int(served.Load())
	if total < 50 {
		t.Errorf("server saw %d requests, want at least the 50 measured", total)
	}
	// Warm-up and measured requests share one numbering: 0..total-1.
	if len(ns) != total {
		t.Errorf("RequestFunc saw %d distinct n, want %d (one per request)", len(ns), total)
	}
	for n := range total {
		if !ns[n] {
			t.Errorf("RequestFunc never saw n = %d", n)
		}
	}
}

func TestRun_CancelStopsRun(t *testing.T) {
	t.Parallel()
	const clients = 4
	tests := map[string]struct {
		reason string
		// hang makes the server never answer, so requests are in flight
		// when ctx is cancelled.
		hang bool
	}{
		"answering server": {reason: "clients must stop between requests"},
		"hanging server":   {reason: "requests in flight must be aborted, and not counted", hang: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			started := make(chan struct{}, clients)
			release := make(chan struct{})
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				select {
				case started <- struct{}{}:
				default:
				}
				if tc.hang {
					select {
					case <-r.Context().Done():
					case <-release:
					}
				}
			})
			t.Cleanup(func() { close(release) }) // runs before srv.Close

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			wait := runAsync(t, ctx, Config{
				TargetURL:   srv.URL,
				Duration:    time.Hour,
				Timeout:     time.Hour,
				Concurrency: clients,
			})
			want := 1
			if tc.hang {
				want = clients // every client is stuck in a request
			}
			for range want {
				select {
				case <-started:
				case <-time.After(waitLimit):
					t.Fatalf("server saw no request within %s", waitLimit)
				}
			}
			cancel()

			res, err := wait()
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run error = %v, want context.Canceled\n%s", err, tc.reason)
			}
			if res.Errors != 0 {
				t.Errorf("Errors = %d (%s), want 0: %s", res.Errors, res.ErrorSample, tc.reason)
			}
			if tc.hang && res.Requests != 0 {
				t.Errorf("Requests = %d, want 0: %s", res.Requests, tc.reason)
			}
			if res.StatusCounts == nil {
				t.Errorf("StatusCounts is nil, want a map")
			}
		})
	}
}

func TestRun_CancelledBeforeStart(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := newServer(t, counting(&served))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()

	res, err := Run(ctx, Config{TargetURL: srv.URL, Requests: 10, Warmup: time.Hour})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run error = %v, want context.Canceled", err)
	}
	if res.Requests != 0 || served.Load() != 0 {
		t.Errorf("Requests = %d, served = %d, want 0, 0", res.Requests, served.Load())
	}
}

func TestRun_CountsTransportErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		reason string
		server func(t *testing.T) (url string)
		cfg    Config
	}{
		"closed server": {
			reason: "a refused connection is a transport error, not a panic",
			server: func(t *testing.T) string {
				srv := httptest.NewServer(http.NotFoundHandler())
				srv.Close()
				return srv.URL
			},
		},
		"server dropping connections": {
			reason: "a connection closed without an answer is a transport error",
			server: func(t *testing.T) string {
				return newServer(t, func(http.ResponseWriter, *http.Request) {
					panic(http.ErrAbortHandler)
				}).URL
			},
		},
		"server slower than timeout": {
			reason: "a request that runs out of Timeout is a transport error",
			server: func(t *testing.T) string {
				release := make(chan struct{})
				srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-r.Context().Done():
					case <-release:
					}
				})
				t.Cleanup(func() { close(release) })
				return srv.URL
			},
			cfg: Config{Timeout: 20 * time.Millisecond},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := tc.cfg
			cfg.TargetURL = tc.server(t)
			cfg.Requests = 20
			cfg.Concurrency = 4

			res, err := Run(t.Context(), cfg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Requests != 20 || res.Errors != 20 || len(res.StatusCounts) != 0 {
				t.Errorf("Requests = %d, Errors = %d, StatusCounts = %v, want 20, 20, none: %s",
					res.Requests, res.Errors, res.StatusCounts, tc.reason)
			}
			if res.ErrorSample == "" {
				t.Errorf("ErrorSample is empty, want a transport error's message")
			}
			if res.Latency != (Latency{}) {
				t.Errorf("Latency = %+v, want zero: failed requests have no latency", res.Latency)
			}
		})
	}
}

func TestRun_InvalidConfig(t *testing.T) {
	t.Parallel()
	const target = "http://127.0.0.1:1"
	tests := map[string]struct {
		reason string
		cfg    Config
	}{
		"no target":           {reason: "the target is required", cfg: Config{}},
		"not http":            {reason: "only http and https", cfg: Config{TargetURL: "ftp://127.0.0.1"}},
		"no host":             {reason: "a host is required", cfg: Config{TargetURL: "http://"}},
		"unparsable target":   {reason: "the URL must parse", cfg: Config{TargetURL: "http://[::1"}},
		"relative path":       {reason: "the path is appended to the base", cfg: Config{TargetURL: target, Path: "health"}},
		"bad method":          {reason: "a method is a token", cfg: Config{TargetURL: target, Method: "GET ME"}},
		"negative clients":    {reason: "no negative counts", cfg: Config{TargetURL: target, Concurrency: -1}},
		"negative requests":   {reason: "no negative counts", cfg: Config{TargetURL: target, Requests: -1}},
		"negative duration":   {reason: "no negative durations", cfg: Config{TargetURL: target, Duration: -time.Second}},
		"negative warmup":     {reason: "no negative durations", cfg: Config{TargetURL: target, Warmup: -time.Second}},
		"negative timeout":    {reason: "no negative durations", cfg: Config{TargetURL: target, Timeout: -time.Second}},
		"control char in url": {reason: "the URL must parse", cfg: Config{TargetURL: "http://host\x7f"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Run(t.Context(), tc.cfg)
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("Run error = %v, want ErrInvalidConfig: %s", err, tc.reason)
			}
		})
	}
}

func TestConfig_Defaults(t *testing.T) {
	t.Parallel()
	got, base, err := Config{TargetURL: "http://127.0.0.1:8080/"}.withDefaults()
	if err != nil {
		t.Fatalf("withDefaults: %v", err)
	}
	want := Config{
		TargetURL:   "http://127.0.0.1:8080/",
		Method:      http.MethodGet,
		Concurrency: 16,
		Duration:    10 * time.Second,
		Timeout:     10 * time.Second,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withDefaults (-want +got):\n%s", diff)
	}
	if base != "http://127.0.0.1:8080" {
		t.Errorf("base = %q, want the target without its trailing slash", base)
	}
}

// Open-loop: requests are due at Rate per second whatever the answers take,
// and one that waits for a free client is timed from when it was due. Here
// one client meets a server taking 30 ms at 100 requests/s: the fifth is
// due at 40 ms but cannot be sent before 120 ms, so its latency is at
// least 110 ms (closed-loop would say 30 ms for every one).
func TestRun_RateCountsTheWaitForAFreeClient(t *testing.T) {
	t.Parallel()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(30 * time.Millisecond) // the server's answer time, not the test waiting
		io.WriteString(w, `{}`)
	})
	res, err := Run(t.Context(), Config{TargetURL: srv.URL, Requests: 5, Concurrency: 1, Rate: 100})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Requests != 5 || res.StatusCounts[200] != 5 {
		t.Fatalf("Requests = %d, StatusCounts = %v, want 5 answered", res.Requests, res.StatusCounts)
	}
	if res.Latency.Max < 110*time.Millisecond {
		t.Errorf("max latency %s, want at least 110ms: the wait for the client is not counted", res.Latency.Max)
	}
}

// Open-loop never sends ahead of the schedule: in a run of about 200 ms at
// 50 requests/s, however fast the server, at most 11 requests are sent
// (slots at 0, 20, ..., 200 ms).
func TestRun_RateIsAnUpperBound(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := newServer(t, counting(&served))
	start := time.Now()
	res, err := Run(t.Context(), Config{TargetURL: srv.URL, Duration: 200 * time.Millisecond, Concurrency: 8, Rate: 50})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	elapsed := time.Since(start)
	if limit := int(elapsed.Seconds()*50) + 1; res.Requests > limit || res.Requests == 0 {
		t.Errorf("sent %d requests in %s at 50/s, want between 1 and %d", res.Requests, elapsed, limit)
	}
}

func TestRun_RefusesANegativeRate(t *testing.T) {
	t.Parallel()
	if _, err := Run(t.Context(), Config{TargetURL: "http://127.0.0.1:1", Rate: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Run with Rate -1 = %v, want ErrInvalidConfig", err)
	}
}
