package sentinel

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics count what the sentinel decides.
type metrics struct {
	cycles     prometheus.Counter
	duration   prometheus.Histogram
	candidates prometheus.Counter
	published  *prometheus.CounterVec
	lost       prometheus.Counter
	failed     prometheus.Counter
	leading    prometheus.Gauge
}

func newMetrics() metrics {
	return metrics{
		cycles: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "steward_sentinel_cycles_total", Help: "Sentinel decision cycles run."}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "steward_sentinel_cycle_seconds", Help: "How long a sentinel decision cycle took.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
		candidates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "steward_sentinel_candidates_total", Help: "Orders the sentinel's query found and its decision read."}),
		published: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "steward_sentinel_published_total", Help: "Reconcile events the sentinel published, by service type and reason."},
			[]string{"service_type", "reason"}),
		lost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "steward_sentinel_lost_total", Help: "Publishes another sentinel made first (not published twice)."}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "steward_sentinel_decision_failures_total", Help: "Orders whose decision could not be evaluated."}),
		leading: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "steward_sentinel_leading", Help: "1 while this process's sentinel runs the cycles (the elected replica), else 0."}),
	}
}

func (m metrics) register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.cycles, m.duration, m.candidates, m.published, m.lost, m.failed, m.leading} {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	return nil
}

func (m metrics) observeCycle(d time.Duration, st CycleStats) {
	m.cycles.Inc()
	m.duration.Observe(d.Seconds())
	m.candidates.Add(float64(st.Candidates))
	m.lost.Add(float64(st.Lost))
	m.failed.Add(float64(st.Failed))
}
