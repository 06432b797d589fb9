package lifecycle

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/status"
)

// Stuck deletions, as HyperFleet's operators asked for them (research §1.6):
// how many orders are in deletion, by age; how many are past the stuck
// threshold and since when; and which adapters hold the stuck ones. Read
// from the store at each scrape, so every replica reports the same figures
// and nothing is kept in memory.
var (
	deletingDesc = prometheus.NewDesc("steward_order_deletions_in_progress",
		"Orders being deleted and not yet removed, by time since their deletion was asked for.",
		[]string{"age"}, nil)
	stuckDesc = prometheus.NewDesc("steward_order_deletions_stuck",
		"Orders waiting at their deletion gate for longer than the stuck threshold (--deletion-stuck-after).",
		nil, nil)
	oldestDesc = prometheus.NewDesc("steward_order_deletion_oldest_seconds",
		"Seconds since the oldest deletion still in progress was asked for (0 when none is).",
		nil, nil)
	heldDesc = prometheus.NewDesc("steward_order_deletions_held_by_adapter",
		"Stuck deletions an adapter holds: it reported on the order but has not confirmed its cleanup.",
		[]string{"adapter"}, nil)
)

// deletionAges are the age buckets of steward_order_deletions_in_progress.
var deletionAges = []struct {
	label string
	below time.Duration
}{
	{"under_1m", time.Minute},
	{"1m_to_10m", 10 * time.Minute},
	{"10m_to_1h", time.Hour},
	{"over_1h", 1<<63 - 1},
}

// metricsScan bounds the deletions one scrape reads; beyond it the figures
// count the oldest ones (the ones that matter).
const metricsScan = 10000

// DeletionMetrics is a prometheus.Collector of the stuck-deletion metrics.
type DeletionMetrics struct{ s *Service }

// DeletionMetrics returns the collector of the service's stuck-deletion
// metrics, to register with a Prometheus registry.
func (s *Service) DeletionMetrics() *DeletionMetrics { return &DeletionMetrics{s: s} }

// Describe implements prometheus.Collector.
func (m *DeletionMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{deletingDesc, stuckDesc, oldestDesc, heldDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *DeletionMetrics) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s := m.s
	deleting, err := s.q.OrderListDeleting(ctx, s.cfg.DB, metricsScan)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(deletingDesc, err)
		return
	}
	now := s.now()
	counts := make([]float64, len(deletionAges))
	oldest := 0.0
	held := map[string]float64{}
	stuck := 0.0
	for i, r := range deleting {
		o := Order{ID: r.ID, DeletedAt: r.DeletedAt, Generation: r.Generation}
		age := now.Sub(*o.DeletedAt)
		if i == 0 {
			oldest = age.Seconds()
		}
		for j, b := range deletionAges {
			if age < b.below {
				counts[j]++
				break
			}
		}
		if age <= s.cfg.DeletionStuckAfter {
			continue
		}
		stuck++
		if s.cfg.Adapters == nil {
			continue
		}
		reports, err := s.cfg.Adapters.All(ctx, o.ID)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(heldDesc, err)
			return
		}
		in := statusOrder(&o, statemachine.State{})
		for _, r := range statusReports(reports) {
			if status.AdapterHold(in, r) != "" {
				held[r.Adapter]++
			}
		}
	}
	for j, b := range deletionAges {
		ch <- prometheus.MustNewConstMetric(deletingDesc, prometheus.GaugeValue, counts[j], b.label)
	}
	ch <- prometheus.MustNewConstMetric(stuckDesc, prometheus.GaugeValue, stuck)
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, oldest)
	for adapter, n := range held {
		ch <- prometheus.MustNewConstMetric(heldDesc, prometheus.GaugeValue, n, adapter)
	}
}
