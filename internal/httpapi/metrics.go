package httpapi

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics counts requests by route (the pattern, never the raw path, so ids
// do not explode the label set) and status code.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// authFailures counts failed authentications by the limit that
	// refused them (LimitNone: answered 401).
	authFailures *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "steward_http_requests_total",
			Help: "HTTP requests served, by method, route pattern and status code.",
		}, []string{"method", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "steward_http_request_duration_seconds",
			Help:    "HTTP request latency, by method and route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "steward_http_auth_failures_total",
			Help: "Failed authentications, by the limit that answered them 429 (none: answered 401).",
		}, []string{"limit"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration, m.authFailures)
	}
	return m
}

func (m *metrics) observe(method, route string, status int, elapsed time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(elapsed.Seconds())
}
