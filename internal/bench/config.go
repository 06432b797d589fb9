package bench

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// RequestFunc varies the request a client sends, for example to give each one
// a unique Idempotency-Key header or a unique ?id= query. n numbers the
// requests of a run from 0 in the order they start, warm-up included, so
// every request gets a different n.
//
// An empty path means [Config.Path] and a nil body means [Config.Body]. The
// header is applied on top of [Config.Headers], replacing values of the same
// name; it may be nil. A RequestFunc is called by every client at once, so it
// must be safe for concurrent use.
type RequestFunc func(n int) (path string, body []byte, header http.Header)

// Config describes a run: what to send, to where, and how hard. A zero field
// means its default.
type Config struct {
	// TargetURL is the server's base URL, such as http://127.0.0.1:8080.
	// Required, http or https.
	TargetURL string
	// Method is the HTTP method. Defaults to GET.
	Method string
	// Path is appended to TargetURL and may carry a query, such as
	// /api/v1/health or /api/v1/items?limit=10.
	Path string
	// Body, when not empty, is sent with every request, with
	// Content-Type: application/json unless Headers says otherwise.
	Body []byte
	// Headers are set on every request. A "Host" entry sets the Host header.
	Headers map[string]string
	// Concurrency is the number of clients, each with at most one request in
	// flight. Defaults to 16. A run of fewer Requests uses that many clients.
	Concurrency int
	// Duration is how long the measured phase sends requests; requests in
	// flight when it ends still complete. Defaults to 10s. Ignored when
	// Requests is set.
	Duration time.Duration
	// Requests, when positive, makes the measured phase send exactly this
	// many requests (fewer only if ctx is cancelled), whatever they take.
	Requests int
	// Warmup is how long to send requests, and then forget them, before the
	// measured phase. Defaults to 0 (no warm-up).
	Warmup time.Duration
	// Timeout bounds each request, from sending it to reading the end of its
	// body. A request that runs out counts as a transport error. Defaults to
	// 10s.
	Timeout time.Duration
	// RequestFunc, when set, varies each request. Optional.
	RequestFunc RequestFunc
	// Rate, when positive, makes the load open-loop: requests are due at
	// Rate per second whatever the answers take, and Concurrency bounds
	// how many are in flight. A request's latency counts from when it was
	// due, so the time it waited for a free client is measured too (no
	// coordinated omission). Zero is closed-loop: each client sends its
	// next request when the last is answered.
	Rate float64
	// ServerPID, when set, is the server's process (on this machine): the
	// result then has the CPU time it used during the measured phase
	// (Result.ServerCPU). Linux only.
	ServerPID int
}

// withDefaults returns cfg with its zero fields set to their defaults, and the
// target URL joined to the path, or an error wrapping [ErrInvalidConfig].
func (cfg Config) withDefaults() (Config, string, error) {
	cfg.Method = cmp.Or(cfg.Method, http.MethodGet)
	cfg.Concurrency = cmp.Or(cfg.Concurrency, 16)
	cfg.Duration = cmp.Or(cfg.Duration, 10*time.Second)
	cfg.Timeout = cmp.Or(cfg.Timeout, 10*time.Second)

	switch {
	case cfg.Concurrency < 0:
		return cfg, "", invalidf("concurrency %d is negative", cfg.Concurrency)
	case cfg.Duration < 0:
		return cfg, "", invalidf("duration %s is negative", cfg.Duration)
	case cfg.Requests < 0:
		return cfg, "", invalidf("requests %d is negative", cfg.Requests)
	case cfg.Warmup < 0:
		return cfg, "", invalidf("warmup %s is negative", cfg.Warmup)
	case cfg.Timeout < 0:
		return cfg, "", invalidf("timeout %s is negative", cfg.Timeout)
	case cfg.Rate < 0:
		return cfg, "", invalidf("rate %g is negative", cfg.Rate)
	}
	u, err := url.Parse(cfg.TargetURL)
	if err != nil {
		return cfg, "", invalidf("target URL: %v", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cfg, "", invalidf("target URL %q is not http(s)://host[:port]", cfg.TargetURL)
	}
	base := strings.TrimSuffix(cfg.TargetURL, "/")
	if cfg.Path != "" && !strings.HasPrefix(cfg.Path, "/") {
		return cfg, "", invalidf("path %q does not start with /", cfg.Path)
	}
	// Build one request now, so that a bad method or path fails the run
	// instead of every request.
	if _, err := http.NewRequest(cfg.Method, base+cfg.Path, nil); err != nil {
		return cfg, "", invalidf("%v", err)
	}
	return cfg, base, nil
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("bench: %w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
}
