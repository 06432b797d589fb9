package bench

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Result is what a run measured, in its measured phase only. It encodes to
// JSON with snake_case names, durations in nanoseconds.
type Result struct {
	// Method and Target are the request line the run was configured with
	// (a [RequestFunc] may have varied the path).
	Method string `json:"method"`
	Target string `json:"target"`
	// Concurrency is the number of clients that ran.
	Concurrency int `json:"concurrency"`
	// OpenLoopRate is Config.Rate: requests due per second, 0 for a
	// closed-loop run.
	OpenLoopRate float64 `json:"open_loop_rate_rps,omitempty"`
	// Requests counts the requests sent and finished, answered or failed.
	Requests int `json:"requests"`
	// Errors counts requests that got no complete answer: refused or reset
	// connections, per-request timeouts, and requests a [RequestFunc] made
	// unsendable (a malformed path). Requests - Errors were answered.
	Errors int `json:"errors"`
	// ErrorSample is one transport error's message, to tell why requests
	// failed. Empty when Errors is 0.
	ErrorSample string `json:"error_sample,omitempty"`
	// StatusCounts counts answered requests per status code. Run never
	// leaves it nil once it has checked the config.
	StatusCounts map[int]int `json:"status_counts"`
	// Duration is the measured phase's wall time.
	Duration time.Duration `json:"duration_ns"`
	// Throughput is Requests per second of Duration.
	Throughput float64 `json:"throughput_rps"`
	// Latency summarises the answered requests' latencies.
	Latency Latency `json:"latency"`
	// Floor, when the run was compared with the floor (see
	// [Result.CompareToFloor]), gives the floor's figures and the run's as
	// fractions of them.
	Floor *Floor `json:"floor,omitempty"`
	// ServerCPU is the server's CPU over the measured phase, when
	// Config.ServerPID was set.
	ServerCPU *ServerCPU `json:"server_cpu,omitempty"`
}

// Latency is a latency distribution. The percentiles are exact, by nearest
// rank over every sample. All fields are zero when there are no samples.
type Latency struct {
	P50  time.Duration `json:"p50_ns"`
	P95  time.Duration `json:"p95_ns"`
	P99  time.Duration `json:"p99_ns"`
	Max  time.Duration `json:"max_ns"`
	Mean time.Duration `json:"mean_ns"`
}

// Write prints r as a short report for people, such as:
//
//	target   GET http://127.0.0.1:8080/api/v1/health
//	clients  16   duration 10.0s   requests 123456   errors 0
//	status   200:123456
//	rate     12345.6 req/s
//	latency  p50 1.20ms  p95 2.50ms  p99 4.10ms  max 20.1ms  mean 1.30ms
//
// with an extra "error" line giving [Result.ErrorSample] when requests
// failed, and a "floor" line when the run was compared with the floor. It returns w's error.
func (r Result) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "target   %s %s\n", r.Method, r.Target)
	fmt.Fprintf(&b, "clients  %d   duration %.1fs   requests %d   errors %d",
		r.Concurrency, r.Duration.Seconds(), r.Requests, r.Errors)
	if r.OpenLoopRate > 0 {
		fmt.Fprintf(&b, "   open loop at %g req/s", r.OpenLoopRate)
	}
	b.WriteString("\n")
	if r.ErrorSample != "" {
		fmt.Fprintf(&b, "error    %s\n", r.ErrorSample)
	}
	b.WriteString("status  ")
	if len(r.StatusCounts) == 0 {
		b.WriteString(" -")
	}
	for _, code := range slices.Sorted(maps.Keys(r.StatusCounts)) {
		fmt.Fprintf(&b, " %d:%d", code, r.StatusCounts[code])
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "rate     %.1f req/s\n", r.Throughput)
	l := r.Latency
	fmt.Fprintf(&b, "latency  p50 %s  p95 %s  p99 %s  max %s  mean %s\n",
		formatLatency(l.P50), formatLatency(l.P95), formatLatency(l.P99),
		formatLatency(l.Max), formatLatency(l.Mean))
	if r.Floor != nil {
		fmt.Fprintf(&b, "floor    %s\n", r.Floor)
	}
	if r.ServerCPU != nil {
		fmt.Fprintf(&b, "server   %s\n", r.ServerCPU)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// merge adds the clients' records into r.
func (r *Result) merge(workers []*worker, elapsed time.Duration) {
	r.Duration = elapsed
	r.StatusCounts = map[int]int{}
	total := 0
	for _, w := range workers {
		total += len(w.latencies)
	}
	samples := make([]time.Duration, 0, total)
	for _, w := range workers {
		r.Requests += w.requests
		r.Errors += w.errors
		if r.ErrorSample == "" {
			r.ErrorSample = w.errSample
		}
		for code, n := range w.statuses {
			r.StatusCounts[code] += n
		}
		samples = append(samples, w.latencies...)
	}
	if elapsed > 0 {
		r.Throughput = float64(r.Requests) / elapsed.Seconds()
	}
	r.Latency = summarize(samples)
}

// summarize sorts samples in place and describes them.
func summarize(samples []time.Duration) Latency {
	if len(samples) == 0 {
		return Latency{}
	}
	slices.Sort(samples)
	var sum time.Duration
	for _, s := range samples {
		sum += s
	}
	return Latency{
		P50:  percentile(samples, 50),
		P95:  percentile(samples, 95),
		P99:  percentile(samples, 99),
		Max:  samples[len(samples)-1],
		Mean: sum / time.Duration(len(samples)),
	}
}

// percentile returns the p-th percentile (0-100) of sorted by nearest rank:
// the smallest sample that at least p% of the samples are less than or equal
// to. It returns 0 for no samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// The epsilon keeps float error in p*n (99.9*1000 = 99900.00000000001)
	// from pushing the rank up by one.
	rank := int(math.Ceil(p*float64(len(sorted))/100 - 1e-9))
	return sorted[min(max(rank-1, 0), len(sorted)-1)]
}

// formatLatency prints d with three significant digits in a unit that keeps
// it readable: 850ns, 12.5µs, 1.20ms, 20.1ms, 1.50s.
func formatLatency(d time.Duration) string {
	var v float64
	var unit string
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		v, unit = float64(d)/float64(time.Microsecond), "µs"
	case d < time.Second:
		v, unit = float64(d)/float64(time.Millisecond), "ms"
	default:
		v, unit = d.Seconds(), "s"
	}
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f%s", v, unit)
	case v < 100:
		return fmt.Sprintf("%.1f%s", v, unit)
	default:
		return fmt.Sprintf("%.0f%s", v, unit)
	}
}
