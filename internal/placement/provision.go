package placement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// provisionArgs is the job that creates a resource's instance through the
// SPRM. It carries the id only: the request is in the resources table.
type provisionArgs struct {
	InstanceID string `json:"instance_id"`
}

func (provisionArgs) Kind() string { return "placement.provision" }

type provisionWorker struct {
	river.WorkerDefaults[provisionArgs]
	s *Service
}

func (w *provisionWorker) Work(ctx context.Context, job *river.Job[provisionArgs]) error {
	return w.s.provision(ctx, job.Args.InstanceID, job.Attempt >= job.MaxAttempts)
}

func (w *provisionWorker) NextRetry(job *river.Job[provisionArgs]) time.Time {
	return time.Now().Add(w.s.backoff(job.Attempt))
}

// provision asks the SPRM to create the resource's instance. The instance
// id is the SPRM id, so a retried job finds what an earlier attempt made
// (sprm.ErrInstanceExists) and creates nothing twice. Transient failures
// are returned (River retries them) until the last attempt; anything else,
// and the last attempt's failure, marks the resource and the order FAILED.
func (s *Service) provision(ctx context.Context, instanceID string, last bool) error {
	r, err := s.Resource(ctx, "", instanceID, true)
	if errors.Is(err, ErrResourceNotFound) {
		s.log.WarnContext(ctx, "provision job for an unknown resource; dropped", "instance_id", instanceID)
		return nil
	}
	if err != nil {
		return err
	}
	if r.DeletedAt != nil {
		return nil // deleted before it was provisioned
	}
	// A resource's status is its instance's once the instance exists: an
	// outcome still UNKNOWN (an earlier attempt's answer was lost) is not
	// an answer, and the create resumed resolves it with the provider.
	if answered(r.Status) {
		return nil // provisioned by an attempt that died before its job completed
	}
	// The answer is recorded on the resource in the SPRM's transaction
	// that records it on the instance; one an earlier attempt got (and
	// Create returns now without recording anything) in one of its own.
	var recorded, deleting bool
	params := s.createParams(r, nil)
	params.AnsweredTx = func(ctx context.Context, tx *store.Tx, status provider.Status) error {
		var err error
		deleting, err = s.markAnsweredTx(ctx, tx, instanceID, status)
		recorded = err == nil
		return err
	}
	in, err := s.cfg.SPRM.Create(ctx, params)
	switch {
	case err == nil:
		if !recorded {
			if deleting, err = s.markAnswered(ctx, instanceID, in.Status); err != nil {
				return err
			}
		}
		if !deleting {
			return nil
		}
		// The order was deleted while the create was in flight (the delete
		// job then found nothing to delete).
		return s.deprovision(ctx, instanceID)
	case transient(err) && !last:
		return fmt.Errorf("provision %s on %s: %w", instanceID, r.ProviderName, err)
	}
	s.log.WarnContext(ctx, "provisioning failed", "instance_id", instanceID, "provider", r.ProviderName, "error", err)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second) // the attempt may have timed out
	defer cancel()
	s.giveUp(ctx, instanceID, err)
	return s.fail(ctx, instanceID, "provisioning failed: "+err.Error())
}

// createParams asks the SPRM to create r's instance under the resource's
// id, from src's data when src is set. Resume takes over what an earlier
// attempt (maybe in a process that died) left: its outcome is resolved with
// the provider, never created twice, never failed for being unknown.
func (s *Service) createParams(r Resource, src *provider.ExportSource) sprm.CreateParams {
	return sprm.CreateParams{
		ID: r.ID, Project: r.Project, ProviderName: r.ProviderName, Spec: r.ValidatedRequest, Resume: true,
		Metadata: provider.CreateMetadata{OrderID: r.CatalogItemInstanceID, Project: r.Project, Labels: r.Labels},
		Source:   src,
	}
}

// markAnswered records that the resource's create was answered with
// status, so that it leaves the stalled-create sweep's index (which then
// reads only the creates still waiting, not every resource ever made), and
// says whether the resource's deletion was asked for. Written with the
// answer on the instance (markAnsweredTx, in the SPRM's transaction), or
// after it: a deletion that commits later finds the instance and deletes
// it itself. From the answer on, the resource's status is read from its
// instance; this one is what the sweep sees.
func (s *Service) markAnswered(ctx context.Context, instanceID string, status provider.Status) (bool, error) {
	var deleting bool
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		var err error
		deleting, err = s.markAnsweredTx(ctx, tx, instanceID, status)
		return err
	})
	return deleting, err
}

// markAnsweredTx is markAnswered in the caller's transaction.
func (s *Service) markAnsweredTx(ctx context.Context, tx *store.Tx, instanceID string, status provider.Status) (bool, error) {
	if !answered(status) {
		// Not an answer after all: the record stays PENDING, in the
		// sweep's sight (its CASE keeps anything else as it is).
		status = provider.StatusPending
	}
	deleting, err := s.q.ResourceSetCreated(ctx, tx, ResourceSetCreatedParams{Status: string(status),
		UpdateTime: s.now(), InstanceID: instanceID})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil // purged meanwhile: nothing waits on it
	case err != nil:
		return false, fmt.Errorf("record the create of %s: %w", instanceID, err)
	}
	return deleting, nil
}

// giveUp abandons a create whose outcome is still unknown at the last
// attempt: the SPRM queues the instance for cleanup, so nothing the
// provider may hold is orphaned.
func (s *Service) giveUp(ctx context.Context, instanceID string, cause error) {
	var unknown *sprm.OutcomeUnknownError
	if !errors.As(cause, &unknown) || !unknown.Resolvable {
		return
	}
	if err := s.cfg.SPRM.Abandon(ctx, instanceID); err != nil {
		// The stale-intent sweep queues it later.
		s.log.ErrorContext(ctx, "abandon a create of unknown outcome", "instance_id", instanceID, "error", err)
	}
}

// transient reports whether a create failure may pass by itself: the
// provider is not healthy now or its answer was lost (the next attempt
// resolves it), or Steward's own store failed. A refusal, a bad request and
// an outcome given up (queued for cleanup, so its id is spent) are final.
func transient(err error) bool {
	var refused *sprm.ProviderError
	var unknown *sprm.OutcomeUnknownError
	var bad *invalid.Error
	switch {
	case errors.As(err, &unknown):
		return unknown.Resolvable
	case errors.As(err, &refused), errors.As(err, &bad), errors.Is(err, sprm.ErrProviderNotFound):
		return false
	}
	return true
}

// backoff is the wait after the attempt-th failed attempt.
//
// NOTE: the workers' NextRetry add it to time.Now, not Config.Now. River
// compares the time returned with its own clock, the real one, so a test
// clock there would run every retry at once (a clock in the past) or never.
// Tests shorten retries with Config.RetryBackoff instead.
func (s *Service) backoff(attempt int) time.Duration {
	d := s.cfg.RetryBackoff
	for i := 1; i < attempt && d < time.Minute; i++ {
		d *= 2
	}
	return min(d, time.Minute)
}

// deprovisionArgs is the job that deletes a resource's instance through the
// SPRM.
type deprovisionArgs struct {
	InstanceID string `json:"instance_id"`
}

func (deprovisionArgs) Kind() string { return "placement.deprovision" }

type deprovisionWorker struct {
	river.WorkerDefaults[deprovisionArgs]
	s *Service
}

func (w *deprovisionWorker) Work(ctx context.Context, job *river.Job[deprovisionArgs]) error {
	err := w.s.deprovision(ctx, job.Args.InstanceID)
	if err == nil || job.Attempt < job.MaxAttempts {
		return err
	}
	// The last attempt failed: the deletion is handed to the cleanup
	// queue, which retries it with its own visible state, so an
	// acknowledged deletion still reaches the provider.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, derr := w.s.cfg.SPRM.Delete(ctx, "", job.Args.InstanceID, true); derr != nil &&
		!errors.Is(derr, sprm.ErrInstanceNotFound) {
		return fmt.Errorf("%w; queue its cleanup: %w", err, derr)
	}
	w.s.log.WarnContext(ctx, "deletion handed to the cleanup queue after the last attempt failed",
		"instance_id", job.Args.InstanceID, "error", err)
	return nil
}

func (w *deprovisionWorker) NextRetry(job *river.Job[deprovisionArgs]) time.Time {
	return time.Now().Add(w.s.backoff(job.Attempt))
}

// deprovision deletes the instance through the SPRM (not deferred). The
// SPRM records the outcome for the order; an instance the SPRM does not
// hold (never created, refused, or already
// deleted) marks the resource DELETED here.
func (s *Service) deprovision(ctx context.Context, instanceID string) error {
	_, err := s.cfg.SPRM.Delete(ctx, "", instanceID, false)
	if errors.Is(err, sprm.ErrInstanceNotFound) {
		return s.deleted(ctx, instanceID)
	}
	if err != nil {
		return fmt.Errorf("delete instance %s: %w", instanceID, err)
	}
	return nil
}
