package sprm

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
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

// CheckHealth on a test clock: a provider is checked only when its next
// check is due, failures back off to the cap while it is unavailable, and a
// slow answer is degraded. With the real clock this would take minutes.
func TestCheckHealth_ScheduleAndBackoffFollowTheClock(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		c := setupClocked(t, engine, nil) // every 10s, unavailable at 2 failures, backoff up to 40s
		start := c.clock.Now()
		steps := []struct {
			name    string
			advance time.Duration
			down    bool
			latency time.Duration
			// checked is whether the pass calls the provider.
			checked      bool
			wantStatus   string
			wantFailures int
			// wantNext is the next check, from the start.
			wantNext time.Duration
		}{
			// Register ran its first check: the pass has nothing due.
			{"a registration is checked as it registers", 0, false, 0, false, HealthHealthy, 0, 10 * time.Second},
			{"not checked before its next check", 9 * time.Second, false, 0, false, HealthHealthy, 0, 10 * time.Second},
			{"first failure is degraded", time.Second, true, 0, true, HealthDegraded, 1, 20 * time.Second},
			{"threshold reached: unavailable", 10 * time.Second, true, 0, true, HealthUnavailable, 2, 30 * time.Second},
			{"backs off: 20s", 10 * time.Second, true, 0, true, HealthUnavailable, 3, 50 * time.Second},
			{"not checked during the backoff", 10 * time.Second, true, 0, false, HealthUnavailable, 3, 50 * time.Second},
			{"backs off: 40s", 10 * time.Second, true, 0, true, HealthUnavailable, 4, 90 * time.Second},
			{"backoff is capped at 40s", 40 * time.Second, true, 0, true, HealthUnavailable, 5, 130 * time.Second},
			{"back up, but not checked before the backoff ends", 39 * time.Second, false, 0, false, HealthUnavailable, 5, 130 * time.Second},
			{"one good answer makes it healthy", time.Second, false, 0, true, HealthHealthy, 0, 140 * time.Second},
			{"a slow answer is degraded", 10 * time.Second, false, 2 * time.Second, true, HealthDegraded, 0, 152 * time.Second},
		}
		for _, st := range steps {
			c.clock.Advance(st.advance)
			c.prov.set(st.down, st.latency)
			before, _ := c.prov.counts()
			if err := c.s.CheckHealth(t.Context()); err != nil {
				t.Fatalf("%s: CheckHealth: %v", st.name, err)
			}
			after, _ := c.prov.counts()
			if checked := after > before; checked != st.checked {
				t.Errorf("%s: provider checked = %v, want %v", st.name, checked, st.checked)
			}
			p, err := c.s.Provider(t.Context(), "vm-sp")
			if err != nil {
				t.Fatal(err)
			}
			if got := p.nextCheckTime.Sub(start); p.Status != st.wantStatus || p.Health.ConsecutiveFailures != st.wantFailures ||
				got != st.wantNext {
				t.Errorf("%s: status %s, %d failures, next check at +%v; want %s, %d, +%v", st.name, p.Status,
					p.Health.ConsecutiveFailures, got, st.wantStatus, st.wantFailures, st.wantNext)
			}
		}
	})
}

// A provider that re-registers while a health check of its old process is
// in flight (restarted after a crash) is judged by a check of the new
// registration, due at once, not by the failed answer of the old one. That
// answer, recorded, would leave the restarted provider degraded and
// refusing creates until the next interval (a CI failure of the PostgreSQL
// provider's crash test).
func TestCheckHealth_ACheckOutdatedByARegistrationIsNotRecorded(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		c := setupClocked(t, engine, nil)
		if err := c.s.CheckHealth(t.Context()); err != nil { // healthy, next check in 10s
			t.Fatal(err)
		}
		c.clock.Advance(10 * time.Second)
		c.prov.set(true, 0) // the old process is dead ...
		c.prov.mu.Lock()
		c.prov.duringHealth = func() { // ... and its successor, which answers, registers during the check
			c.prov.set(false, 0)
			reg := provider.Registration{Name: "vm-sp", Endpoint: "http://127.0.0.1:2", ServiceTypes: []string{"vm"}}
			if _, _, err := c.s.Register(context.Background(), "", reg); err != nil {
				t.Errorf("re-register: %v", err)
			}
			c.prov.set(true, 0) // the old process's check still fails
		}
		c.prov.mu.Unlock()
		if err := c.s.CheckHealth(t.Context()); err != nil {
			t.Fatal(err)
		}
		p, err := c.s.Provider(t.Context(), "vm-sp")
		if err != nil {
			t.Fatal(err)
		}
		// What is recorded is the new registration's own first check, run
		// as it registered, not the outdated failure.
		if p.Status != HealthHealthy || p.Health.ConsecutiveFailures != 0 || p.Endpoint != "http://127.0.0.1:2" {
			t.Fatalf("after an outdated failed check: status %s, %d failures, endpoint %s; want healthy, 0, the new one",
				p.Status, p.Health.ConsecutiveFailures, p.Endpoint)
		}
		if checks, _ := c.prov.counts(); checks != 3 {
			t.Errorf("%d health checks, want 3: the first registration's, the outdated one, the new registration's", checks)
		}
	})
}

// Two checks that judged the same state (a registration's own first check
// and the periodic pass, which found the new provider due at once) record
// its change once: one audit record and one failure counted, not two (a
// CI failure of TestAudit_EveryMutatingRequest saw unknown → healthy twice).
func TestCheckHealth_TwoChecksOfOneStateRecordItsChangeOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		c := setupClocked(t, engine, nil) // healthy, next check in 10s
		c.clock.Advance(10 * time.Second)
		c.prov.set(true, 0)
		judged, err := c.s.Provider(t.Context(), "vm-sp")
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // both read healthy with no failure before either wrote
			if err := c.s.checkOne(t.Context(), judged); err != nil {
				t.Fatal(err)
			}
		}
		p, err := c.s.Provider(t.Context(), "vm-sp")
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != HealthDegraded || p.Health.ConsecutiveFailures != 1 {
			t.Errorf("after two checks of one healthy state: %s with %d failures, want degraded with 1",
				p.Status, p.Health.ConsecutiveFailures)
		}
		page, err := audit.New(c.s.cfg.DB).List(t.Context(), audit.ListParams{Action: "provider.health.changed"})
		if err != nil {
			t.Fatal(err)
		}
		var changes []string
		for _, r := range page.Results {
			changes = append(changes, fmt.Sprint(r.Details["from"], " → ", r.Details["to"]))
		}
		if want := []string{"unknown → healthy", "healthy → degraded"}; !slices.Equal(changes, want) {
			t.Errorf("health changes recorded: %q, want %q", changes, want)
		}
	})
}
