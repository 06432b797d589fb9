package credentials

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// Rotate starts the rotation of order ref's credentials: an Operation and
// the job that has the provider rotate, in one transaction, so an
// acknowledged rotation is never lost. The same request again (requestKey,
// httpapi.RequestKey) returns the Operation it started.
func (s *Service) Rotate(ctx context.Context, project, ref, requestKey string) (operations.Operation, error) {
	if requestKey != "" {
		if op, err := s.cfg.Operations.ByRequestKey(ctx, project, requestKey); !errors.Is(err, operations.ErrNotFound) {
			return op, err
		}
	}
	placed, prov, err := s.target(ctx, project, ref)
	if err != nil {
		return operations.Operation{}, err
	}
	var op operations.Operation
	err = s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		op, err = s.cfg.Operations.StartTx(ctx, tx, operations.StartParams{Project: placed.Project, Kind: KindRotate,
			Target: "catalog-item-instances/" + placed.OrderID, RequestKey: requestKey,
			Metadata: map[string]any{"instance_id": placed.InstanceID, "provider_name": prov.Name}})
		if errors.Is(err, store.ErrAlreadyExists) { // operations_one_rotation
			return fmt.Errorf("%w: order %s", ErrRotationInProgress, placed.OrderID)
		}
		if err != nil {
			return err
		}
		return s.cfg.Jobs.InsertTx(ctx, tx, rotateArgs{OperationID: op.ID, Project: placed.Project, InstanceID: placed.InstanceID,
			ProviderName: prov.Name}, &river.InsertOpts{MaxAttempts: s.cfg.RotateAttempts, Queue: s.cfg.JobQueue})
	})
	if err != nil {
		return operations.Operation{}, fmt.Errorf("start the rotation of %s's credentials: %w", placed.OrderID, err)
	}
	s.log.InfoContext(ctx, "credentials rotation requested", "order_id", placed.OrderID, "instance_id",
		placed.InstanceID, "provider", prov.Name, "operation_id", op.ID)
	return op, nil
}

// rotateArgs is the job that has the provider rotate an instance's
// credentials.
type rotateArgs struct {
	OperationID  string `json:"operation_id"`
	Project      string `json:"project"`
	InstanceID   string `json:"instance_id"`
	ProviderName string `json:"provider_name"`
}

// Kind implements river.JobArgs.
func (rotateArgs) Kind() string { return "credentials_rotate" }

type rotateWorker struct {
	river.WorkerDefaults[rotateArgs]
	s *Service
}

// RegisterWorkers adds the rotation worker to the jobs registry.
func (s *Service) RegisterWorkers(w *river.Workers) {
	river.AddWorker(w, &rotateWorker{s: s})
}

func (w *rotateWorker) Work(ctx context.Context, job *river.Job[rotateArgs]) error {
	return w.s.rotate(ctx, job.Args, job.Attempt >= job.MaxAttempts)
}

// NextRetry waits 1s, 2s, 4s, ... up to a minute: a provider that is
// restarting is back within seconds.
func (w *rotateWorker) NextRetry(job *river.Job[rotateArgs]) time.Time {
	return time.Now().Add(min(time.Second<<min(job.Attempt-1, 6), time.Minute))
}

// rotate has the provider rotate, with the operation id as its idempotency
// key, so a job run again after a crash rotates once. The provider's
// refusal (a 4xx but 401 and 429, or it no longer holds the instance) fails
// the Operation at once; anything else is retried, and fails it at the
// last attempt.
func (s *Service) rotate(ctx context.Context, a rotateArgs, last bool) error {
	// A job attempt that outlived its operation (a duplicate attempt after
	// a takeover, late) must not reach the provider: a newer rotation of
	// the instance may have run since, and the provider would take this
	// one's id for a new rotation.
	op, err := s.cfg.Operations.Get(ctx, a.Project, a.OperationID)
	switch {
	case errors.Is(err, operations.ErrNotFound) || err == nil && op.Done:
		return nil
	case err != nil:
		return err
	}
	prov, err := s.cfg.Providers.Provider(ctx, a.ProviderName)
	if err != nil {
		return s.finish(ctx, a, operations.FinishParams{Err: fmt.Errorf("%w: provider %s: %w", ErrNotPlaced,
			a.ProviderName, err)}, last || errors.Is(err, sprm.ErrProviderNotFound), err)
	}
	rot, err := s.cfg.Client.RotateCredentials(provider.WithCallToken(ctx, prov.CallToken), prov.Endpoint,
		provider.RotateRequest{InstanceID: a.InstanceID, OperationID: a.OperationID})
	if err != nil {
		ferr := s.providerFailed(prov, Placed{InstanceID: a.InstanceID}, err)
		var refused interface{ HTTPStatus() int }
		final := errors.Is(ferr, ErrNotPlaced) || errors.As(ferr, &refused)
		return s.finish(ctx, a, operations.FinishParams{Err: ferr}, last || final, err)
	}
	s.log.InfoContext(ctx, "credentials rotated", "instance_id", a.InstanceID, "provider", prov.Name,
		"operation_id", a.OperationID)
	return s.finish(ctx, a, operations.FinishParams{Response: map[string]any{"instance_id": a.InstanceID,
		"rotate_time": rot.RotateTime}}, true, nil)
}

// finish records the outcome when final; otherwise it returns cause, for
// River to retry.
func (s *Service) finish(ctx context.Context, a rotateArgs, p operations.FinishParams, final bool, cause error) error {
	if !final {
		return cause
	}
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		_, err := s.cfg.Operations.FinishTx(ctx, tx, a.OperationID, p)
		return err
	})
	if errors.Is(err, operations.ErrAlreadyDone) || errors.Is(err, operations.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("finish rotation %s: %w", a.OperationID, err)
	}
	if p.Err != nil {
		s.log.WarnContext(ctx, "credentials rotation failed", "instance_id", a.InstanceID, "operation_id",
			a.OperationID, "error", p.Err)
	}
	return nil
}
