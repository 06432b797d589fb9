package sprm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/limits"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// Resync (issue 22) reads instances back from their providers, so that a
// status report lost on its way (a replica killed while the provider
// reported to it) cannot leave an instance, and its order, PROVISIONING
// for ever. Every status Steward learns from a provider schedules the
// instance's next read (resync_time): a transitional one ResyncAfter
// later, a settled one within ResyncSettledEvery. Every process claims due
// instances in the database, so replicas share the work and no instance is
// read by two of them at once; the answer goes through ApplyStatus, as a
// report would.

// ResyncResult counts what one resync pass did, by outcome.
type ResyncResult struct {
	// Unchanged: the provider holds what Steward records.
	Unchanged int
	// Changed: the answer was applied as a status report.
	Changed int
	// NotFound: the provider answered 404 (the instance is FAILED, or
	// DELETED if it was being deleted).
	NotFound int
	// Stale: a report newer than the read was applied meanwhile.
	Stale int
	// Errors: the provider was unavailable, unreachable or answered an
	// error; nothing changed and the next read backs off.
	Errors int
}

// Resync outcomes, the values of the outcome label of steward_sprm_resyncs_total.
const (
	resyncUnchanged = "unchanged"
	resyncChanged   = "changed"
	resyncNotFound  = "not_found"
	resyncStale     = "stale"
	resyncError     = "error"
)

// resyncClaim is a due instance as its claim returned it.
type resyncClaim struct {
	id, provider string
	status       provider.Status
	message      string
	outputs      json.RawMessage
	attempts     int
}

// settled reports whether a status needs no more than the slow, spread re-read.
func settled(st provider.Status) bool {
	return st == provider.StatusRunning || st == provider.StatusCompleted || st == provider.StatusFailed
}

// resyncDue is when an instance whose status st Steward learned at t is
// next read back from its provider; nil is never (deleted, or settled with
// settled resyncs off).
func (s *Service) resyncDue(st provider.Status, t time.Time) *time.Time {
	var due time.Time
	switch {
	case st == provider.StatusDeleted:
		return nil
	case settled(st):
		if s.cfg.ResyncSettledEvery < 0 {
			return nil
		}
		due = t.Add(s.settledDelay())
	default:
		due = t.Add(s.resyncAfter())
	}
	return &due
}

// settledDelay is a random time in [ResyncSettledEvery/2, ResyncSettledEvery],
// so that settled instances come due spread over time.
func (s *Service) settledDelay() time.Duration {
	every := s.cfg.ResyncSettledEvery
	return every/2 + rand.N(every/2+1)
}

// resyncAfter is ResyncAfter, or its default while resync is off (the
// schedule is still written, for a server that has it on).
func (s *Service) resyncAfter() time.Duration {
	if s.cfg.ResyncAfter < 0 {
		return 30 * time.Second
	}
	return s.cfg.ResyncAfter
}

// resyncBackoff is the wait before the next read of an instance that stayed
// transitional (or whose provider did not answer) attempts reads in a row.
func (s *Service) resyncBackoff(attempts int) time.Duration {
	d := s.resyncAfter()
	for i := 0; i < attempts && d < s.cfg.ResyncMaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.cfg.ResyncMaxBackoff)
}

// ResyncAfter is how long a transitional instance goes unread before it is
// read back, the configured value or its default.
func (s *Service) ResyncAfter() time.Duration { return s.resyncAfter() }

// ResyncEnabled reports whether this Service reads instances back (ResyncAfter ≥ 0).
func (s *Service) ResyncEnabled() bool { return s.cfg.ResyncAfter >= 0 }

// RunResync claims the instances that are due and reads each back from
// its provider, CleanupConcurrency at a time, until none are due. Every
// process sharing the store runs it (see the server's resync loop); the
// claims keep them from reading one instance twice.
func (s *Service) RunResync(ctx context.Context) (ResyncResult, error) {
	var res ResyncResult
	providers := map[string]*Provider{}
	for ctx.Err() == nil {
		claimed, err := s.claimResync(ctx)
		if err != nil {
			return res, err
		}
		s.resyncAll(ctx, claimed, providers, &res)
		if len(claimed) < s.cfg.ResyncBatch {
			break
		}
	}
	return res, ctx.Err()
}

// claimResync takes up to ResyncBatch due instances until ClaimTimeout from
// now; a process killed meanwhile has its claims released by ReapTx sooner.
func (s *Service) claimResync(ctx context.Context) ([]resyncClaim, error) {
	var claimed []resyncClaim
	t := s.now()
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		until := t.Add(s.cfg.ClaimTimeout)
		rows, err := s.q.InstanceResyncClaim(ctx, tx, InstanceResyncClaimParams{ResyncTime: &until,
			ResyncClaimedBy: s.cfg.ProcessID, Now: t, Limit: int64(s.cfg.ResyncBatch)})
		claimed, err = fromRows(rows, err, func(r InstanceResyncClaimRow, _ error) (resyncClaim, error) {
			return resyncClaim{id: r.ID, provider: r.ProviderName, status: provider.Status(r.Status),
				message: r.StatusMessage, outputs: r.Outputs, attempts: int(r.ResyncAttempts)}, nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim instances due for resync: %w", err)
	}
	return claimed, nil
}

func (s *Service) resyncAll(ctx context.Context, claimed []resyncClaim, providers map[string]*Provider, res *ResyncResult) {
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	sem := make(chan struct{}, s.cfg.CleanupConcurrency)
	for _, c := range claimed {
		prov, ok := providers[c.provider]
		if !ok {
			if p, err := s.Provider(ctx, c.provider); err == nil {
				prov = &p
			}
			providers[c.provider] = prov
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			outcome := s.resyncOne(ctx, prov, c)
			mu.Lock()
			defer mu.Unlock()
			switch outcome {
			case resyncUnchanged:
				res.Unchanged++
			case resyncChanged:
				res.Changed++
			case resyncNotFound:
				res.NotFound++
			case resyncStale:
				res.Stale++
			default:
				res.Errors++
			}
		}()
	}
	wg.Wait()
}

// resyncOne reads one claimed instance from its provider (nil: not
// registered), applies the answer, and schedules the next read. It returns
// the outcome.
func (s *Service) resyncOne(ctx context.Context, prov *Provider, c resyncClaim) (outcome string) {
	defer func() {
		s.metrics.resyncs.WithLabelValues(outcome).Inc() // before the next write, which may wait for the store
		s.scheduleResync(ctx, c, outcome)
	}()
	if prov == nil || prov.Status == HealthUnavailable {
		why := "is not registered"
		if prov != nil {
			why = "is unavailable"
		}
		s.log.DebugContext(ctx, "resync skipped: provider "+why, "instance_id", c.id, "provider", c.provider)
		return resyncError
	}
	sent := s.now()
	got, err := s.cfg.Providers.Get(prov.calling(ctx), prov.Endpoint, c.id)
	outcome = resyncChanged
	switch {
	case errors.Is(err, provider.ErrNotFound) && c.status == provider.StatusDeleting:
		// The DELETE contract: a 404 for an instance being deleted means it is gone.
		got = provider.Instance{Status: provider.StatusDeleted, Message: "deleted (404 on resync)"}
		outcome = resyncNotFound
	case errors.Is(err, provider.ErrNotFound):
		got = provider.Instance{Status: provider.StatusFailed,
			Message: fmt.Sprintf("provider %s no longer has instance %s (404 on resync)", prov.Name, c.id)}
		outcome = resyncNotFound
	case err != nil:
		s.log.WarnContext(ctx, "resync: provider did not answer; will retry", "instance_id", c.id,
			"provider", prov.Name, "attempts", c.attempts+1, "error", err)
		return resyncError
	}
	got.Outputs = s.answeredOutputs(ctx, prov.Name, c.id, got.Outputs)
	got.Message = limits.Truncate(got.Message, limits.MaxMessage) // as recordCreated keeps it
	if got.Status == c.status && got.Message == c.message && sameOutputs(got.Outputs, c.outputs) {
		now := s.now()
		n, err := s.q.InstanceResyncUnchanged(ctx, s.cfg.DB, InstanceResyncUnchangedParams{StatusTime: &now, ID: c.id,
			Status: string(c.status), StatusMessage: c.message})
		if err != nil {
			s.log.WarnContext(ctx, "resync: record an unchanged status", "instance_id", c.id, "error", err)
			return resyncError
		}
		if n == 1 && outcome == resyncNotFound {
			return outcome // a provider that lost the instance still counts
		}
		if n == 1 {
			return resyncUnchanged
		}
		// The row changed since the claim: apply the answer as a report would be.
	}
	in, err := s.applyStatus(ctx, c.id, provider.StatusReport{Status: got.Status, Message: got.Message, ObservedTime: sent,
		Outputs: got.Outputs}, nil, ViaResync)
	switch {
	case errors.Is(err, ErrStaleReport):
		return resyncStale
	case err != nil:
		s.log.WarnContext(ctx, "resync: apply the provider's answer", "instance_id", c.id, "provider", prov.Name,
			"status", got.Status, "error", err)
		return resyncError
	}
	s.metrics.resyncChanges.WithLabelValues(string(c.status), string(in.Status)).Inc()
	s.log.InfoContext(ctx, "instance status resynced from its provider", "instance_id", c.id, "provider", prov.Name,
		"from", c.status, "to", in.Status, "message", in.StatusMessage, "previous_message", c.message)
	return outcome
}

// scheduleResync releases the claim and sets the next read by the status
// the instance has now.
func (s *Service) scheduleResync(ctx context.Context, c resyncClaim, outcome string) {
	t := s.now()
	attempts := c.attempts + 1
	if outcome == resyncChanged || outcome == resyncStale {
		attempts = 0 // news came: start the backoff over
	}
	var settledAt *time.Time
	if s.cfg.ResyncSettledEvery >= 0 {
		at := t.Add(s.settledDelay())
		settledAt = &at
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	// Not the typed method: settledAt may be NULL (settled instances are
	// not read again), which querygen cannot tell of a parameter in a CASE.
	if _, err := s.cfg.DB.Exec(ctx, s.q.instanceResyncDone, settledAt, t.Add(s.resyncBackoff(attempts)),
		attempts, c.id, s.cfg.ProcessID); err != nil {
		s.log.WarnContext(ctx, "resync: schedule the next read; the claim will expire", "instance_id", c.id, "error", err)
	}
}

// ReapResyncTx makes the instances dead processes had claimed for resync
// due again at once, in the reaping transaction (a peers.Reaper).
func (s *Service) ReapResyncTx(ctx context.Context, tx *store.Tx, dead []string) error {
	now := s.now()
	if _, err := s.q.InstanceResyncReleaseOfDead(ctx, tx, &now, dead); err != nil {
		return fmt.Errorf("release the resync claims of %v: %w", dead, err)
	}
	return nil
}

// noResync is a resync_time of none: an instance whose create's outcome is
// not known is not read back (its create job or the cleanup resolves it).
var noResync *time.Time
