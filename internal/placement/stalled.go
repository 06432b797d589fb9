package placement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// stalledAfter is how long a rehydration or a first create may run before
// the sweep checks that its job is still alive.
const stalledAfter = time.Minute

// errJobGivenUp is the error a sweep finishes given-up work with.
var errJobGivenUp = errors.New("its job was given up by the job runner (discarded after a crash or a panic)")

// SweepStalled finishes the work whose job River gave up on without the
// worker's last attempt finishing it (a panic, a rescue past its attempts):
// a rehydration still RUNNING fails (its operation finishes, the order is
// free to rehydrate again), a resource still waiting for its first create
// fails; both hand an instance of unknown outcome to the cleanup queue.
// Work whose job is still queued or retrying is left alone. It runs as a
// periodic job and returns how many it finished.
func (s *Service) SweepStalled(ctx context.Context) (int, error) {
	horizon := s.now().Add(-stalledAfter)
	rehydrations, err := s.q.ResourceRehydrationsStalled(ctx, s.cfg.DB, horizon)
	if err != nil {
		return 0, fmt.Errorf("list stalled rehydrations: %w", err)
	}
	pending, err := s.q.ResourcesPendingStalled(ctx, s.cfg.DB, horizon)
	if err != nil {
		return 0, fmt.Errorf("list stalled resources: %w", err)
	}

	finished := 0
	var errs []error
	for _, r := range rehydrations {
		alive, err := s.cfg.Jobs.Pending(ctx, s.cfg.DB, rehydrateArgs{}.Kind(), "new_instance_id", r.InstanceID)
		if err != nil || alive {
			errs = append(errs, err)
			continue
		}
		if err := s.finishStalledRehydration(ctx, rehydrateArgs{OldInstanceID: r.RehydratedFrom, NewInstanceID: r.InstanceID,
			OperationID: r.RehydrationOperation}); err != nil {
			errs = append(errs, err)
			continue
		}
		finished++
	}
	for _, r := range pending {
		id := r.InstanceID
		if answered(provider.Status(r.InstanceStatus)) {
			// Answered by a process that died before recording it.
			if _, err := s.markAnswered(ctx, id, provider.Status(r.InstanceStatus)); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		alive, err := s.cfg.Jobs.Pending(ctx, s.cfg.DB, provisionArgs{}.Kind(), "instance_id", id)
		if err != nil || alive {
			errs = append(errs, err)
			continue
		}
		s.log.WarnContext(ctx, "provisioning stalled: its job was given up; failing it", "instance_id", id)
		if err := s.cfg.SPRM.Abandon(ctx, id); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := s.fail(ctx, id, "provisioning failed: "+errJobGivenUp.Error()); err != nil {
			errs = append(errs, err)
			continue
		}
		finished++
	}
	return finished, errors.Join(errs...)
}

// answered reports whether an instance's status answers its create: it
// exists, and it is neither the intent's PENDING nor an outcome UNKNOWN.
func answered(status provider.Status) bool {
	return status != "" && status != provider.StatusPending && status != provider.StatusUnknown
}

// finishStalledRehydration ends a rehydration whose job was given up: done
// when the new instance runs, else failed with the new instance handed to
// the cleanup queue.
func (s *Service) finishStalledRehydration(ctx context.Context, a rehydrateArgs) error {
	r, err := s.Resource(ctx, "", a.NewInstanceID, true)
	if err != nil {
		return err
	}
	in, err := s.cfg.SPRM.Instance(ctx, "", a.NewInstanceID, true)
	held := err == nil && in.Deletion == nil && in.DeletedAt == nil && answered(in.Status)
	switch {
	case held && in.Status == provider.StatusRunning:
		s.log.WarnContext(ctx, "rehydration stalled after its new instance ran: completing it",
			"instance_id", a.NewInstanceID, "operation_id", a.OperationID)
		return s.completeRehydration(ctx, a, r)
	case held:
		return s.failNew(ctx, a, r, errJobGivenUp)
	}
	s.log.WarnContext(ctx, "rehydration stalled: its job was given up; failing it", "instance_id", a.NewInstanceID,
		"operation_id", a.OperationID)
	if err := s.cfg.SPRM.Abandon(ctx, a.NewInstanceID); err != nil {
		return err
	}
	return s.failRehydration(ctx, a, errJobGivenUp)
}
