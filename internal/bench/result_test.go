package bench

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ms returns 1ms, 2ms, … n ms.
func ms(n int) []time.Duration {
	s := make([]time.Duration, n)
	for i := range s {
		s[i] = time.Duration(i+1) * time.Millisecond
	}
	return s
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		reason string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		"empty":          {reason: "no samples, no latency", sorted: nil, p: 50, want: 0},
		"single p50":     {reason: "one sample is every percentile", sorted: ms(1), p: 50, want: time.Millisecond},
		"single p99":     {reason: "one sample is every percentile", sorted: ms(1), p: 99, want: time.Millisecond},
		"100 p50":        {reason: "rank 50 of 100", sorted: ms(100), p: 50, want: 50 * time.Millisecond},
		"100 p95":        {reason: "rank 95 of 100", sorted: ms(100), p: 95, want: 95 * time.Millisecond},
		"100 p99":        {reason: "rank 99 of 100", sorted: ms(100), p: 99, want: 99 * time.Millisecond},
		"100 p100":       {reason: "p100 is the max", sorted: ms(100), p: 100, want: 100 * time.Millisecond},
		"100 p0":         {reason: "p0 is the min", sorted: ms(100), p: 0, want: time.Millisecond},
		"10 p50":         {reason: "rank 5 of 10", sorted: ms(10), p: 50, want: 5 * time.Millisecond},
		"10 p95":         {reason: "rank ceil(9.5) = 10, nearest rank rounds up", sorted: ms(10), p: 95, want: 10 * time.Millisecond},
		"10 p99":         {reason: "rank ceil(9.9) = 10", sorted: ms(10), p: 99, want: 10 * time.Millisecond},
		"4 p50":          {reason: "rank 2 of 4: nearest rank does not interpolate", sorted: ms(4), p: 50, want: 2 * time.Millisecond},
		"1000 p99.9":     {reason: "float error in 99.9*1000 must not push the rank to 1000", sorted: ms(1000), p: 99.9, want: 999 * time.Millisecond},
		"duplicates p50": {reason: "ties are samples too", sorted: []time.Duration{1, 1, 1, 7}, p: 50, want: 1},
		"duplicates p99": {reason: "ties are samples too", sorted: []time.Duration{1, 1, 1, 7}, p: 99, want: 7},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("percentile(%d samples, %v) = %s, want %s: %s", len(tc.sorted), tc.p, got, tc.want, tc.reason)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		reason  string
		samples []time.Duration
		want    Latency
	}{
		"none": {reason: "no samples, all zero", want: Latency{}},
		"1..100ms shuffled": {
			reason:  "samples arrive unsorted from several clients",
			samples: shuffled(ms(100)),
			want: Latency{
				P50: 50 * time.Millisecond, P95: 95 * time.Millisecond, P99: 99 * time.Millisecond,
				Max: 100 * time.Millisecond, Mean: 50500 * time.Microsecond,
			},
		},
		"one outlier": {
			reason:  "a single slow request moves max and mean, not p99 of 200",
			samples: shuffled(append(repeat(time.Millisecond, 199), time.Second)),
			want: Latency{
				P50: time.Millisecond, P95: time.Millisecond, P99: time.Millisecond,
				Max: time.Second, Mean: (199*time.Millisecond + time.Second) / 200,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, summarize(tc.samples)); diff != "" {
				t.Errorf("summarize (-want +got): %s\n%s", tc.reason, diff)
			}
		})
	}
}

func TestResult_Merge(t *testing.T) {
	t.Parallel()
	workers := []*worker{
		{requests: 3, statuses: map[int]int{200: 2, 503: 1}, latencies: []time.Duration{3, 1, 2}},
		{requests: 4, errors: 2, errSample: "connection refused", statuses: map[int]int{200: 2}, latencies: []time.Duration{4, 5}},
		{statuses: map[int]int{}},
	}
	var got Result
	got.merge(workers, 2*time.Second)
	want := Result{
		Requests:     7,
		Errors:       2,
		ErrorSample:  "connection refused",
		StatusCounts: map[int]int{200: 4, 503: 1},
		Duration:     2 * time.Second,
		Throughput:   3.5,
		Latency:      Latency{P50: 3, P95: 5, P99: 5, Max: 5, Mean: 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merge (-want +got):\n%s", diff)
	}
}

func TestResult_Write(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		reason string
		res    Result
		want   string
	}{
		"healthy": {
			reason: "the report shown in the package brief",
			res: Result{
				Method: "GET", Target: "http://127.0.0.1:8080/api/v1/health", Concurrency: 16,
				Requests: 123456, StatusCounts: map[int]int{200: 123456},
				Duration: 10 * time.Second, Throughput: 12345.6,
				Latency: Latency{
					P50: 1200 * time.Microsecond, P95: 2500 * time.Microsecond, P99: 4100 * time.Microsecond,
					Max: 20100 * time.Microsecond, Mean: 1300 * time.Microsecond,
				},
			},
			want: `target   GET http://127.0.0.1:8080/api/v1/health
clients  16   duration 10.0s   requests 123456   errors 0
status   200:123456
rate     12345.6 req/s
latency  p50 1.20ms  p95 2.50ms  p99 4.10ms  max 20.1ms  mean 1.30ms
`,
		},
		"mixed with errors": {
			reason: "codes sorted, and one error message to say why",
			res: Result{
				Method: "POST", Target: "http://h/x", Concurrency: 2,
				Requests: 6, Errors: 1, ErrorSample: "dial tcp: connection refused",
				StatusCounts: map[int]int{503: 2, 200: 3},
				Duration:     1500 * time.Millisecond, Throughput: 4,
				Latency: Latency{P50: 800, P95: 45 * time.Microsecond, P99: 150 * time.Millisecond, Max: 2 * time.Second, Mean: 9 * time.Millisecond},
			},
			want: `target   POST http://h/x
clients  2   duration 1.5s   requests 6   errors 1
error    dial tcp: connection refused
status   200:3 503:2
rate     4.0 req/s
latency  p50 800ns  p95 45.0µs  p99 150ms  max 2.00s  mean 9.00ms
`,
		},
		"nothing answered": {
			reason: "an empty status line still reads as a line",
			res:    Result{Method: "GET", Target: "http://h", Concurrency: 1},
			want: `target   GET http://h
clients  1   duration 0.0s   requests 0   errors 0
status   -
rate     0.0 req/s
latency  p50 0ns  p95 0ns  p99 0ns  max 0ns  mean 0ns
`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			if err := tc.res.Write(&b); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("Write (-want +got): %s\n%s", tc.reason, diff)
			}
		})
	}
}

func TestResult_JSON(t *testing.T) {
	t.Parallel()
	res := Result{
		Method: "GET", Target: "http://h/x", Concurrency: 2,
		Requests: 3, Errors: 1, ErrorSample: "boom",
		StatusCounts: map[int]int{200: 1, 503: 1},
		Duration:     time.Second, Throughput: 3,
		Latency: Latency{P50: 1, P95: 2, P99: 3, Max: 4, Mean: 5},
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	want := `{"method":"GET","target":"http://h/x","concurrency":2,"requests":3,"errors":1,` +
		`"error_sample":"boom","status_counts":{"200":1,"503":1},"duration_ns":1000000000,` +
		`"throughput_rps":3,"latency":{"p50_ns":1,"p95_ns":2,"p99_ns":3,"max_ns":4,"mean_ns":5}}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if diff := cmp.Diff(res, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestFormatLatency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0ns"},
		{850, "850ns"},
		{1500, "1.50µs"},
		{12500, "12.5µs"},
		{1200 * time.Microsecond, "1.20ms"},
		{20100 * time.Microsecond, "20.1ms"},
		{150 * time.Millisecond, "150ms"},
		{1500 * time.Millisecond, "1.50s"},
		{125 * time.Second, "125s"},
	}
	for _, tc := range tests {
		if got := formatLatency(tc.d); got != tc.want {
			t.Errorf("formatLatency(%d) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func shuffled(s []time.Duration) []time.Duration {
	rand.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s
}

func repeat(d time.Duration, n int) []time.Duration {
	s := make([]time.Duration, n)
	for i := range s {
		s[i] = d
	}
	return s
}
