package sprm

import (
	"testing"
	"time"
)

// The health state machine, case by case (seed: SP health check).
func TestNextHealth(t *testing.T) {
	s := &Service{cfg: Config{HealthInterval: 10 * time.Second, SlowThreshold: time.Second, FailureThreshold: 3,
		MaxHealthBackoff: time.Minute}}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		r        checkResult
		failures int
		want     healthState
	}{
		{"healthy and fast", checkResult{answered: true, healthy: true, latency: time.Millisecond}, 2,
			healthState{HealthHealthy, 0, "", at.Add(10 * time.Second)}},
		{"healthy but slow is degraded", checkResult{answered: true, healthy: true, latency: 2 * time.Second}, 0,
			healthState{HealthDegraded, 0, "slow health answer (2s)", at.Add(10 * time.Second)}},
		{"answers unhealthy: degraded, no failure counted", checkResult{answered: true, message: "db down"}, 1,
			healthState{HealthDegraded, 0, "provider reports unhealthy: db down", at.Add(10 * time.Second)}},
		{"first failure is degraded", checkResult{message: "refused"}, 0,
			healthState{HealthDegraded, 1, "refused", at.Add(10 * time.Second)}},
		{"threshold reached: unavailable", checkResult{message: "refused"}, 2,
			healthState{HealthUnavailable, 3, "refused", at.Add(10 * time.Second)}},
		{"backs off while unavailable", checkResult{message: "refused"}, 4,
			healthState{HealthUnavailable, 5, "refused", at.Add(40 * time.Second)}},
		{"backoff is capped", checkResult{message: "refused"}, 20,
			healthState{HealthUnavailable, 21, "refused", at.Add(time.Minute)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.nextHealth(tc.r, tc.failures, at); got != tc.want {
				t.Errorf("nextHealth = %+v, want %+v", got, tc.want)
			}
		})
	}
}
