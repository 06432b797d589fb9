package sprm

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	healthTransitions *prometheus.CounterVec
	creates           *prometheus.CounterVec
	cleanups          *prometheus.CounterVec
	resyncs           *prometheus.CounterVec
	resyncChanges     *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		healthTransitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "steward_provider_health_transitions_total",
			Help: "Provider health state changes, by provider and from/to state.",
		}, []string{"provider", "from", "to"}),
		creates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "steward_sprm_creates_total",
			Help: "Service-type instance creates, by outcome (accepted, refused, unknown, rejected).",
		}, []string{"outcome"}),
		cleanups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "steward_cleanup_tasks_total",
			Help: "Cleanup task attempts, by outcome (done, retry, failed, skipped).",
		}, []string{"outcome"}),
		resyncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "steward_sprm_resyncs_total",
			Help: "Instances read back from their providers, by outcome (unchanged, changed, not_found, stale, error).",
		}, []string{"outcome"}),
		resyncChanges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "steward_sprm_resync_changes_total",
			Help: "Status changes a resync applied (the provider's answer differed from the record), by from/to status.",
		}, []string{"from", "to"}),
	}
	if reg != nil {
		reg.MustRegister(m.healthTransitions, m.creates, m.cleanups, m.resyncs, m.resyncChanges)
	}
	return m
}
