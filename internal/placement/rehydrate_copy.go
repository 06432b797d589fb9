package placement

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// A rehydration carries its data when the old instance's provider and the
// new one's both registered the export operation (issue 24). The rehydrate
// job then:
//
//  1. asks the old provider to stop writes to the old instance and grant
//     its export (sprm.BeginExport), and notes when the copy began;
//  2. creates the new instance with the grant as its source: the new
//     provider pulls the data from the old one and answers PROVISIONING;
//  3. waits, snoozing (a snooze spends no attempt), until the new instance
//     is RUNNING (the copy is done: the rehydration completes as any other,
//     and the old instance, still read-only, is deleted by the cleanup
//     queue), or FAILED, or the copy outlasts Config.CopyTimeout. Either of
//     the last two fails the rehydration: in one transaction the new
//     instance is queued for deletion and the job that lets the old one
//     take writes again (placement.end_export) is queued.
//
// The grant's token is a secret and is never stored: a retry before the
// create was accepted asks for a new grant.

// copiesData reports whether the rehydration into r carries its data. It is
// decided once: a copy that began goes on whatever the providers register
// later.
func (s *Service) copiesData(ctx context.Context, a rehydrateArgs, r Resource) (bool, error) {
	started, err := s.q.ResourceCopyStart(ctx, s.cfg.DB, r.ID)
	if err != nil {
		return false, fmt.Errorf("read the copy start of %s: %w", r.ID, err)
	}
	if started != nil {
		return true, nil
	}
	old, err := s.Resource(ctx, "", a.OldInstanceID, true)
	if err != nil {
		return false, err
	}
	ok, err := s.cfg.SPRM.ExportsData(ctx, old.ProviderName, r.ProviderName)
	if errors.Is(err, sprm.ErrProviderNotFound) {
		return false, nil // a provider gone cannot export: rehydrated as without export
	}
	return ok, err
}

// rehydrateWithData is an attempt of the rehydrate job for a rehydration
// that carries its data: start the copy, or follow it.
func (s *Service) rehydrateWithData(ctx context.Context, a rehydrateArgs, r Resource, last bool) error {
	in, err := s.cfg.SPRM.Instance(ctx, "", r.ID, true)
	switch {
	case errors.Is(err, sprm.ErrInstanceNotFound):
		return s.startCopy(ctx, a, r, last)
	case err != nil:
		return err
	case in.Status == provider.StatusPending || in.Status == provider.StatusUnknown:
		return s.startCopy(ctx, a, r, last) // the create's outcome is unknown: resolve it
	}
	return s.followNew(ctx, a, r, in, true)
}

// startCopy begins the old instance's export and creates the new instance
// from it.
func (s *Service) startCopy(ctx context.Context, a rehydrateArgs, r Resource, last bool) error {
	src, err := s.cfg.SPRM.BeginExport(ctx, a.OldInstanceID)
	if err != nil {
		if exportRetryable(err) && !last {
			return fmt.Errorf("rehydrate: begin the export of %s: %w", a.OldInstanceID, err)
		}
		return s.failCopy(ctx, a, r, fmt.Errorf("the old instance's export could not begin: %w", err))
	}
	t := s.now()
	if _, err := s.q.ResourceSetCopyStart(ctx, s.cfg.DB, ResourceSetCopyStartParams{CopyStartTime: t, UpdateTime: t,
		InstanceID: r.ID}); err != nil {
		return fmt.Errorf("record the copy start of %s: %w", r.ID, err)
	}
	_, err = s.cfg.SPRM.Create(ctx, s.createParams(r, &src))
	switch {
	case err == nil:
		s.log.InfoContext(ctx, "rehydration copying its data", "order_id", r.CatalogItemInstanceID,
			"old_instance_id", a.OldInstanceID, "new_instance_id", r.ID, "provider", r.ProviderName)
		return river.JobSnooze(s.copyPoll(0))
	case transient(err) && !last:
		return fmt.Errorf("rehydrate: create %s on %s: %w", r.ID, r.ProviderName, err)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	s.giveUp(ctx, r.ID, err)
	return s.failCopy(ctx, a, r, err)
}

// followNew looks at the new instance once its create was accepted: the
// rehydration completes once it is RUNNING (a copy is then done), fails
// once it failed or went, once the order's deletion took the old resource
// ([ErrOrderGone]), or once it has waited Config.CopyTimeout, and
// otherwise looks again later (a snooze spends no attempt). The wait runs
// from the copy's start, or from the create.
func (s *Service) followNew(ctx context.Context, a rehydrateArgs, r Resource, in sprm.Instance, copying bool) error {
	fail := func(cause error) error { return s.failNew(ctx, a, r, cause) }
	since := in.CreateTime
	if copying {
		fail = func(cause error) error { return s.failCopy(ctx, a, r, cause) }
		started, err := s.q.ResourceCopyStart(ctx, s.cfg.DB, r.ID)
		if err != nil {
			return err
		}
		if started != nil {
			since = *started
		}
	}
	if in.Status == provider.StatusRunning {
		return s.completeRehydration(ctx, a, r)
	}
	// An order deleted meanwhile took its old resource with it: the new
	// instance is not waited for (nor would it be kept).
	old, err := s.Resource(ctx, "", a.OldInstanceID, true)
	if err != nil && !errors.Is(err, ErrResourceNotFound) {
		return err
	}
	if err != nil || old.DeletedAt != nil {
		return s.failReplacement(ctx, a, r, fmt.Errorf("%w: its resource %s is being deleted", ErrOrderGone, a.OldInstanceID), nil)
	}
	switch in.Status {
	case provider.StatusFailed, provider.StatusDeleting, provider.StatusDeleted:
		if copying {
			return fail(fmt.Errorf("the copy of the data failed: %s", in.StatusMessage))
		}
		return fail(fmt.Errorf("the new instance is %s: %s", in.Status, in.StatusMessage))
	}
	took := max(s.now().Sub(since), 0)
	if took > s.cfg.CopyTimeout {
		if copying {
			return fail(fmt.Errorf("the copy of the data did not end within %s", s.cfg.CopyTimeout))
		}
		return fail(fmt.Errorf("the new instance was not running within %s", s.cfg.CopyTimeout))
	}
	return river.JobSnooze(s.copyPoll(took))
}

// copyPoll is how long the job waits before looking at a copy again: a
// tenth of how long it has taken, between 200ms and 15s. A look is a
// job fetch and one read, and the order moves at the first look after
// the copy ended.
func (s *Service) copyPoll(took time.Duration) time.Duration {
	return min(max(took/10, 200*time.Millisecond), 15*time.Second)
}

// failCopy fails a rehydration that was carrying its data: the new
// instance is deleted, and the old one takes writes again.
func (s *Service) failCopy(ctx context.Context, a rehydrateArgs, r Resource, cause error) error {
	s.log.WarnContext(ctx, "rehydration failed: the data was not copied; the old instance serves on",
		"order_id", r.CatalogItemInstanceID, "old_instance_id", a.OldInstanceID, "new_instance_id", r.ID, "error", cause)
	return s.failReplacement(ctx, a, r, fmt.Errorf("%w: %w", ErrCopyFailed, cause), func(tx *store.Tx) error {
		return s.cfg.Jobs.InsertTx(ctx, tx, endExportArgs{InstanceID: a.OldInstanceID, OrderID: r.CatalogItemInstanceID},
			&river.InsertOpts{MaxAttempts: 25, Queue: s.cfg.JobQueue})
	})
}

// failNew fails a rehydration whose new instance was created but did not
// come to run: it is deleted, and the order stays on the old one.
func (s *Service) failNew(ctx context.Context, a rehydrateArgs, r Resource, cause error) error {
	s.log.WarnContext(ctx, "rehydration failed: the new instance did not run; the old instance serves on",
		"order_id", r.CatalogItemInstanceID, "old_instance_id", a.OldInstanceID, "new_instance_id", r.ID, "error", cause)
	return s.failReplacement(ctx, a, r, fmt.Errorf("%w: %w", ErrNewInstanceFailed, cause), nil)
}

// failReplacement fails the rehydration with cause and queues its new
// instance's deletion, with also (when not nil), in one transaction.
func (s *Service) failReplacement(ctx context.Context, a rehydrateArgs, r Resource, cause error, also func(*store.Tx) error) error {
	return s.failRehydrationWith(ctx, a, cause, func(tx *store.Tx) error {
		if err := s.cfg.SPRM.CleanupEnqueueTx(ctx, tx, r.ID); err != nil && !errors.Is(err, sprm.ErrInstanceNotFound) {
			return fmt.Errorf("queue deletion of %s: %w", r.ID, err)
		}
		if also != nil {
			return also(tx)
		}
		return nil
	})
}

// exportRetryable says whether an export that could not begin may begin
// later: not when the old provider refused it (a 4xx other than 401, which
// a restarted provider answers until it registers again, and 429).
func exportRetryable(err error) bool {
	var re *provider.ResponseError
	switch {
	case errors.Is(err, provider.ErrNotFound), errors.Is(err, sprm.ErrInstanceNotFound),
		errors.Is(err, sprm.ErrExportNotSupported):
		return false
	case errors.As(err, &re):
		return re.StatusCode >= 500 || re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusTooManyRequests
	}
	return true
}

// endExportArgs is the job that lets an instance whose copy failed take
// writes again.
type endExportArgs struct {
	InstanceID string `json:"instance_id"`
	OrderID    string `json:"order_id"`
}

func (endExportArgs) Kind() string { return "placement.end_export" }

type endExportWorker struct {
	river.WorkerDefaults[endExportArgs]
	s *Service
}

func (w *endExportWorker) Work(ctx context.Context, job *river.Job[endExportArgs]) error {
	err := w.s.cfg.SPRM.EndExport(ctx, job.Args.InstanceID)
	if errors.Is(err, sprm.ErrInstanceNotFound) || errors.Is(err, sprm.ErrExportNotSupported) ||
		errors.Is(err, sprm.ErrProviderNotFound) {
		return nil // nothing left to open
	}
	return err
}

func (w *endExportWorker) NextRetry(job *river.Job[endExportArgs]) time.Time {
	return time.Now().Add(min(w.s.backoff(job.Attempt), 30*time.Second))
}
