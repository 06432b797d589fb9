package bench

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Run sends load as cfg describes and reports what it measured. It blocks
// until the run ends: after cfg.Requests requests, or cfg.Duration (plus the
// requests then in flight) when Requests is not set, or when ctx is done.
//
// When ctx is done, Run aborts the requests in flight (they are not counted)
// and returns what it measured so far together with ctx.Err(), so a caller
// can still print a partial report. A bad cfg returns an error wrapping
// [ErrInvalidConfig] before any request is sent. Failing requests are counted
// in [Result.Errors], never returned. Run leaves no goroutine or idle
// connection behind. Several runs may proceed at once.
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg, base, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	clients := cfg.Concurrency
	if cfg.Requests > 0 {
		clients = min(clients, cfg.Requests)
	}
	tr := newTransport(clients)
	defer tr.CloseIdleConnections()
	r := &runner{
		cfg:  cfg,
		base: base,
		client: &http.Client{
			Transport: tr,
			// A load generator measures the answer it got, 3xx included.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}

	if cfg.Warmup > 0 {
		r.phase(ctx, clients, durationLimit(time.Now().Add(cfg.Warmup)), 0)
	}

	res := Result{
		Method:       cfg.Method,
		Target:       base + cfg.Path,
		Concurrency:  clients,
		OpenLoopRate: cfg.Rate,
	}
	if err := ctx.Err(); err != nil {
		res.StatusCounts = map[int]int{}
		return res, err
	}
	var cpuBefore time.Duration
	if cfg.ServerPID > 0 {
		if cpuBefore, err = processCPU(cfg.ServerPID); err != nil {
			res.StatusCounts = map[int]int{}
			return res, err
		}
	}
	start := time.Now()
	more, perClient := durationLimit(start.Add(cfg.Duration)), 0
	if cfg.Requests > 0 {
		more, perClient = countLimit(cfg.Requests), cfg.Requests/clients+1
	}
	workers := r.phase(ctx, clients, more, perClient)
	res.merge(workers, time.Since(start))
	if cfg.ServerPID > 0 {
		cpuAfter, err := processCPU(cfg.ServerPID)
		if err != nil {
			return res, err
		}
		used := cpuAfter - cpuBefore
		res.ServerCPU = &ServerCPU{PID: cfg.ServerPID, Seconds: used.Seconds(), Cores: used.Seconds() / res.Duration.Seconds()}
		if res.Requests > 0 {
			res.ServerCPU.PerRequest = used / time.Duration(res.Requests)
		}
	}
	return res, ctx.Err()
}

// runner holds what a run's clients share. Its methods are safe for
// concurrent use.
type runner struct {
	cfg    Config
	base   string
	client *http.Client
	// seq numbers requests for RequestFunc, across both phases.
	seq atomic.Int64
}

// worker is one client's record, owned by its goroutine until the phase ends.
type worker struct {
	requests  int
	errors    int
	errSample string
	statuses  map[int]int
	latencies []time.Duration
}

// phase runs clients goroutines, each sending requests one after another
// while more says so and ctx is not done, and returns their records once
// every one has returned. perClient sizes each client's latency slice.
func (r *runner) phase(ctx context.Context, clients int, more func() bool, perClient int) []*worker {
	workers := make([]*worker, clients)
	sched := &schedule{rate: r.cfg.Rate, origin: time.Now()}
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{statuses: map[int]int{}, latencies: make([]time.Duration, 0, perClient)}
		workers[i] = w
		wg.Go(func() { r.loop(ctx, w, more, sched) })
	}
	wg.Wait()
	return workers
}

// schedule hands out the times open-loop requests are due (Config.Rate).
type schedule struct {
	rate   float64
	origin time.Time
	slots  atomic.Int64
}

// next waits until the next request is due and returns when that was; a
// closed-loop schedule (rate 0) answers the zero time at once (the request
// is timed from when it is sent).
func (s *schedule) next(ctx context.Context) time.Time {
	if s.rate <= 0 {
		return time.Time{}
	}
	due := s.origin.Add(time.Duration(float64(s.slots.Add(1)-1) / s.rate * float64(time.Second)))
	if wait := time.Until(due); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return due
}

func (r *runner) loop(ctx context.Context, w *worker, more func() bool, sched *schedule) {
	for ctx.Err() == nil && more() {
		due := sched.next(ctx)
		if ctx.Err() != nil {
			return
		}
		n := int(r.seq.Add(1) - 1)
		status, latency, err := r.do(ctx, n, due)
		if err != nil && ctx.Err() != nil {
			return // aborted by the caller: not the server's answer
		}
		w.requests++
		if err != nil {
			w.errors++
			if w.errSample == "" {
				w.errSample = err.Error()
			}
			continue
		}
		w.statuses[status]++
		w.latencies = append(w.latencies, latency)
	}
}

// do sends request n and reads its whole response, returning the status and
// the latency from due, or the transport error.
func (r *runner) do(ctx context.Context, n int, due time.Time) (int, time.Duration, error) {
	path, body := r.cfg.Path, r.cfg.Body
	var header http.Header
	if r.cfg.RequestFunc != nil {
		p, b, h := r.cfg.RequestFunc(n)
		if p != "" {
			path = p
		}
		if b != nil {
			body = b
		}
		header = h
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	var rd io.Reader
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.cfg.Method, r.base+path, rd)
	if err != nil {
		return 0, 0, err
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.cfg.Headers {
		req.Header.Set(k, v)
	}
	for k, vs := range header {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if host := req.Header.Get("Host"); host != "" {
		req.Host = host
	}

	start := due // open-loop: when it was due
	if start.IsZero() {
		start = time.Now()
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	// Drain the body so the connection goes back to the pool; a response
	// cut short is a transport error.
	_, err = io.Copy(io.Discard, resp.Body)
	latency := time.Since(start)
	err = errors.Join(err, resp.Body.Close())
	if err != nil {
		return 0, 0, err
	}
	return resp.StatusCode, latency, nil
}

// newTransport returns a transport that keeps one idle keep-alive connection
// per client, so that in steady state no request waits for a dial.
func newTransport(clients int) *http.Transport {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	return &http.Transport{
		// Load goes straight to the target, whatever the environment says.
		Proxy: nil,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		Protocols:           &protocols,
		MaxIdleConns:        clients,
		MaxIdleConnsPerHost: clients,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		// Gunzipping would load the client, not the server.
		DisableCompression: true,
	}
}

// countLimit allows exactly n calls, across all clients, to return true.
func countLimit(n int) func() bool {
	var claimed atomic.Int64
	return func() bool { return claimed.Add(1) <= int64(n) }
}

// durationLimit returns true until deadline.
func durationLimit(deadline time.Time) func() bool {
	return func() bool { return time.Now().Before(deadline) }
}
