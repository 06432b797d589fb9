package sprm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// healthBatch bounds the providers checked in one pass.
const healthBatch = 200

// checkResult is what one health check saw.
type checkResult struct {
	// answered is true when the provider answered 200 with a health body.
	answered bool
	// healthy is the body's verdict; latency the time the answer took.
	healthy bool
	latency time.Duration
	message string
}

// healthState is a provider's health after a check.
type healthState struct {
	status   string
	failures int
	message  string
	next     time.Time
}

// nextHealth is the health state machine (seed: SP health check, DCM's
// three-state model): an answer of "healthy" in time → healthy; an answer of
// "unhealthy", or a slow one → degraded (reachable, so no failure is
// counted); no answer (error, timeout, non-200) → one more consecutive
// failure: degraded below the threshold, unavailable at it. While
// unavailable, checks back off exponentially up to a cap, so a dead
// provider is not hammered; one good answer makes it healthy again.
func (s *Service) nextHealth(r checkResult, failures int, at time.Time) healthState {
	switch {
	case r.answered && r.healthy && r.latency <= s.cfg.SlowThreshold:
		return healthState{HealthHealthy, 0, "", at.Add(s.cfg.HealthInterval)}
	case r.answered && r.healthy:
		return healthState{HealthDegraded, 0, fmt.Sprintf("slow health answer (%s)", r.latency.Round(time.Millisecond)), at.Add(s.cfg.HealthInterval)}
	case r.answered:
		return healthState{HealthDegraded, 0, "provider reports unhealthy: " + r.message, at.Add(s.cfg.HealthInterval)}
	}
	failures++
	if failures < s.cfg.FailureThreshold {
		return healthState{HealthDegraded, failures, r.message, at.Add(s.cfg.HealthInterval)}
	}
	backoff := s.cfg.HealthInterval
	for i := s.cfg.FailureThreshold; i < failures && backoff < s.cfg.MaxHealthBackoff; i++ {
		backoff *= 2
	}
	return healthState{HealthUnavailable, failures, r.message, at.Add(min(backoff, s.cfg.MaxHealthBackoff))}
}

// CheckHealth checks every provider whose next check is due, concurrently,
// and records the outcome. It runs as a periodic job on the leader.
func (s *Service) CheckHealth(ctx context.Context) error {
	rows, err := s.q.ProviderListDue(ctx, s.cfg.DB, s.now(), healthBatch)
	if err != nil {
		return fmt.Errorf("list providers due for a health check: %w", err)
	}
	due, err := fromRows(rows, nil, providerFromRow[ProviderListDueRow])
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(due))
	sem := make(chan struct{}, s.cfg.CleanupConcurrency)
	for i, p := range due {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = s.checkOne(ctx, p)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *Service) checkOne(ctx context.Context, p Provider) error {
	// The latency is read on the same clock as the schedule, so a test can
	// make an answer slow by moving its clock instead of waiting.
	start := s.cfg.Now()
	h, err := s.cfg.Providers.Health(p.calling(ctx), p.Endpoint)
	r := checkResult{latency: s.cfg.Now().Sub(start)}
	if err == nil {
		r.answered, r.healthy, r.message = true, h.Status == "healthy", h.Message
	} else {
		r.message = healthFailure(err)
		// The error itself, the body of an answer included, is for an
		// operator debugging: every user reads the message (finding 5).
		attrs := []any{"provider", p.Name, "message", r.message, "error", err}
		var re *provider.ResponseError
		if errors.As(err, &re) {
			attrs = append(attrs, "status_code", re.StatusCode, "body", string(re.Body[:min(len(re.Body), 1024)]))
		}
		s.log.DebugContext(ctx, "health check failed", attrs...)
	}
	at := s.now()
	st := s.nextHealth(r, p.Health.ConsecutiveFailures, at)
	var outdated bool
	err = s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		n, err := s.q.ProviderUpdateHealth(ctx, tx, ProviderUpdateHealthParams{Status: st.status,
			ConsecutiveFailures: int64(st.failures), HealthMessage: st.message, LastCheckTime: &at, NextCheckTime: st.next,
			UpdateTime: at, ID: p.ID, Version: p.Version, FromStatus: p.Status,
			FromConsecutiveFailures: int64(p.Health.ConsecutiveFailures)})
		if err != nil {
			return err
		}
		// Re-registered (or deregistered) while the check ran: the answer
		// was about a registration that is gone, and the new one has its
		// own check due at once. Or another check of the same state (the
		// registration's own and the periodic pass's) recorded first.
		outdated = n == 0
		if outdated || st.status == p.Status {
			return nil
		}
		return audit.WriteTx(ctx, tx, audit.Record{Actor: audit.System, Action: "provider.health.changed",
			Target: "provider:" + p.Name, Outcome: audit.OutcomeSuccess, Time: at, Details: map[string]any{
				"from": p.Status, "to": st.status, "consecutive_failures": st.failures, "message": st.message}})
	})
	if err != nil {
		return fmt.Errorf("record health of %s: %w", p.Name, err)
	}
	if outdated {
		s.log.DebugContext(ctx, "health check outdated by a new registration or another check; not recorded", "provider", p.Name, "status", st.status)
		return nil
	}
	if st.status != p.Status {
		s.registry.invalidate()
		s.metrics.healthTransitions.WithLabelValues(p.Name, p.Status, st.status).Inc()
		log := s.log.WarnContext
		if st.status == HealthHealthy {
			log = s.log.InfoContext
		}
		log(ctx, "provider health changed", "provider", p.Name, "from", p.Status, "to", st.status,
			"consecutive_failures", st.failures, "message", st.message, "next_check_time", st.next)
	}
	return nil
}

// healthFailure is the health message of a check without an answer: its
// status or a fixed reason, never what the endpoint answered (an internal
// service's body, for an endpoint that names one) nor where its name
// resolved (finding 5, SSRF). The message is shown to every user
// (GET /api/v1/providers, the console) and logged at warn.
func healthFailure(err error) string {
	var re *provider.ResponseError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &re):
		return fmt.Sprintf("health check answered %d", re.StatusCode)
	case errors.Is(err, egress.ErrRefused):
		return "health check failed: address not allowed (--provider-allow-cidr)"
	case errors.Is(err, provider.ErrTimeout):
		return "health check failed: timed out"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "health check failed: connection refused"
	case errors.As(err, &dnsErr):
		return "health check failed: the endpoint's name did not resolve"
	case errors.Is(err, provider.ErrInvalidResponse):
		return "health check failed: the answer is not a health status"
	case errors.Is(err, provider.ErrUnreachable):
		return "health check failed: unreachable"
	}
	return "health check failed"
}

// usable reports whether creates may go to the provider.
func usable(p Provider) bool { return p.Status == HealthHealthy }
