package placement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/policy"
	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/resourceid"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// KindRehydrate is the kind of the operations rehydrations answer with.
const KindRehydrate = "rehydrate"

// Rehydration outcomes kept in rehydration_status.
const (
	rehydrationRunning = "RUNNING"
	rehydrationDone    = "DONE"
	rehydrationFailed  = "FAILED"
)

// RehydrateParams asks to rehydrate the current resource InstanceID of an
// order into NewInstanceID.
type RehydrateParams struct {
	// Project is the caller's project ("" for any).
	Project       string
	InstanceID    string
	NewInstanceID string
	// Target is the operation's target; defaults to resources/{InstanceID}.
	Target string
	// RequestKey identifies the request (httpapi.RequestKey): run again
	// under the same key, Rehydrate returns the operation it started.
	RequestKey string
	// StartedFunc, when not nil, runs in the transaction that starts the
	// rehydration (the order's lifecycle logs it); its error is
	// Rehydrate's, and nothing starts. A replay of the request (the same
	// RequestKey) does not run it again.
	StartedFunc func(ctx context.Context, tx *store.Tx, r RehydrationStart) error
}

// RehydrationStart is what a rehydration that starts is: its operation,
// the instance it replaces and the new one, on the provider placement chose.
type RehydrationStart struct {
	OrderID       string
	OperationID   string
	OldInstanceID string
	NewInstanceID string
	ProviderName  string
}

// Rehydrate runs the synchronous part of the rehydration seed's flow: it
// retrieves the original intent of the resource (404 when none), refuses a
// second rehydration of the same order ([ErrRehydrationInProgress]), runs
// today's policy chain on the ORIGINAL intent (a rejection is noted on the
// resource and recorded as a failed operation, and the old resource stays
// untouched), then in one transaction stores the validated request under
// the new instance id, starts the operation and queues the job that creates
// the new instance and, only once it is RUNNING, retires the old one. It
// returns the running operation.
func (s *Service) Rehydrate(ctx context.Context, p RehydrateParams) (operations.Operation, error) {
	if s.cfg.Operations == nil || s.cfg.Changes == nil {
		return operations.Operation{}, errors.New("placement: rehydration is not wired (Operations, Changes)")
	}
	switch {
	case p.NewInstanceID == "":
		return operations.Operation{}, invalid.New("new_instance_id", "is required")
	case !resourceid.Valid(p.NewInstanceID): // AEP-122; the generated UUIDs pass
		return operations.Operation{}, resourceid.Check("new_instance_id", p.NewInstanceID)
	case p.NewInstanceID == p.InstanceID:
		return operations.Operation{}, invalid.New("new_instance_id", "must differ from the current instance id")
	}
	if op, err := s.cfg.Operations.ByRequestKey(ctx, p.Project, p.RequestKey); !errors.Is(err, operations.ErrNotFound) {
		return op, err
	}
	old, err := s.Resource(ctx, p.Project, p.InstanceID, false)
	if err != nil {
		return operations.Operation{}, err
	}
	if p.Target == "" {
		p.Target = "resources/" + old.ID
	}
	if err := s.checkNoRehydration(ctx, s.cfg.DB, old.CatalogItemInstanceID); err != nil {
		return operations.Operation{}, err
	}
	if err := s.checkFreeID(ctx, p.NewInstanceID); err != nil {
		return operations.Operation{}, err
	}
	meta := map[string]any{
		"old_instance_id": old.ID, "new_instance_id": p.NewInstanceID,
		"catalog_item_instance_id": old.CatalogItemInstanceID,
	}
	// The original intent, never regenerated from the catalog item.
	placed, err := s.Place(ctx, PlaceParams{Spec: old.OriginalRequest, Labels: old.Labels, Project: old.Project})
	if err != nil {
		var rejected *policy.RejectedError
		var conflict *policy.ConflictError
		if errors.As(err, &rejected) || errors.As(err, &conflict) {
			s.recordRefusal(ctx, old, p.Target, meta, err)
		}
		return operations.Operation{}, err
	}
	var op operations.Operation
	err = s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := s.checkNoRehydration(ctx, tx, old.CatalogItemInstanceID); err != nil {
			return err
		}
		cur, err := s.ResourceTx(ctx, tx, old.ID)
		if err != nil {
			return err
		}
		if cur.DeletedAt != nil {
			return fmt.Errorf("%w: %s", ErrResourceNotFound, old.ID)
		}
		meta["provider_name"] = placed.ProviderName
		op, err = s.cfg.Operations.StartTx(ctx, tx, operations.StartParams{
			Project: old.Project, Kind: KindRehydrate, Target: p.Target, Metadata: meta, RequestKey: p.RequestKey,
		})
		if err != nil {
			return err
		}
		t := s.now()
		_, err = s.q.ResourceInsertRehydration(ctx, tx, ResourceInsertRehydrationParams{InstanceID: p.NewInstanceID,
			CatalogItemInstanceID: old.CatalogItemInstanceID, Project: old.Project, ServiceType: old.ServiceType,
			Labels: store.JSON(nonNilMap(old.Labels)), OriginalRequest: store.JSON(old.OriginalRequest),
			ValidatedRequest: store.JSON(placed.Spec), ProviderName: placed.ProviderName,
			PolicyStatus: placed.PolicyStatus, CreateTime: t, UpdateTime: t, RehydratedFrom: &old.ID,
			RehydrationOperation: op.ID})
		if errors.Is(err, store.ErrAlreadyExists) {
			// The instance id is checked first; what is left is a
			// concurrent rehydration of the same order.
			return ErrRehydrationInProgress
		}
		if err != nil {
			return fmt.Errorf("record resource %s: %w", p.NewInstanceID, err)
		}
		if p.StartedFunc != nil {
			if err := p.StartedFunc(ctx, tx, RehydrationStart{OrderID: old.CatalogItemInstanceID, OperationID: op.ID,
				OldInstanceID: old.ID, NewInstanceID: p.NewInstanceID, ProviderName: placed.ProviderName}); err != nil {
				return err
			}
		}
		return s.cfg.Jobs.InsertTx(ctx, tx, rehydrateArgs{
			OldInstanceID: old.ID, NewInstanceID: p.NewInstanceID, OperationID: op.ID,
		}, s.insertOpts())
	})
	if err != nil {
		return operations.Operation{}, err
	}
	s.log.InfoContext(ctx, "rehydration started", "order_id", old.CatalogItemInstanceID, "old_instance_id", old.ID,
		"new_instance_id", p.NewInstanceID, "provider", placed.ProviderName, "operation_id", op.ID)
	return op, nil
}

// checkFreeID refuses a new instance id placement or the SPRM already
// knows: the job would take an existing instance for its own create.
func (s *Service) checkFreeID(ctx context.Context, id string) error {
	_, err := s.Resource(ctx, "", id, true)
	if err == nil {
		return fmt.Errorf("%w: %s", ErrResourceExists, id)
	}
	if !errors.Is(err, ErrResourceNotFound) {
		return err
	}
	_, err = s.cfg.SPRM.Instance(ctx, "", id, true)
	if err == nil {
		return fmt.Errorf("%w: %s", ErrResourceExists, id)
	}
	if errors.Is(err, sprm.ErrInstanceNotFound) {
		return nil
	}
	return err
}

// checkNoRehydration refuses when the order has a running rehydration. The
// unique partial index resources_one_rehydration settles races.
func (s *Service) checkNoRehydration(ctx context.Context, q store.Querier, orderID string) error {
	running, err := s.q.ResourceRehydrationRunning(ctx, q, orderID)
	switch {
	case err == nil:
		return fmt.Errorf("%w: order %s, new instance %s", ErrRehydrationInProgress, orderID, running)
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("look up running rehydrations: %w", err)
	}
	// The old instance of a failed copy takes writes again by a job: a
	// new copy begun before it ran would find its source writable.
	opening, err := s.cfg.Jobs.Pending(ctx, q, endExportArgs{}.Kind(), "order_id", orderID)
	if err != nil {
		return fmt.Errorf("look up exports ending: %w", err)
	}
	if opening {
		return fmt.Errorf("%w: order %s: the last rehydration's source is still being made writable", ErrRehydrationInProgress, orderID)
	}
	return nil
}

// recordRefusal notes a rehydration the policy chain refused on the old
// resource and records it as a failed operation, in one transaction. The
// refusal is the answer even if recording it fails.
func (s *Service) recordRefusal(ctx context.Context, old Resource, target string, meta map[string]any, cause error) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := s.cfg.DB.InTx(wctx, func(tx *store.Tx) error {
		op, err := s.cfg.Operations.StartTx(wctx, tx, operations.StartParams{
			Project: old.Project, Kind: KindRehydrate, Target: target, Metadata: meta,
		})
		if err != nil {
			return err
		}
		if _, err := s.cfg.Operations.FinishTx(wctx, tx, op.ID, operations.FinishParams{Err: cause}); err != nil {
			return err
		}
		return s.noteRehydrationTx(wctx, tx, old.ID, "REJECTED", meta["new_instance_id"], op.ID, cause.Error())
	})
	if err != nil {
		s.log.ErrorContext(ctx, "record refused rehydration", "instance_id", old.ID, "error", err)
	}
}

// noteRehydrationTx writes the last_rehydration note of a resource.
func (s *Service) noteRehydrationTx(ctx context.Context, tx *store.Tx, instanceID, outcome string, newID any,
	operationID, message string) error {
	t := s.now()
	note := map[string]any{"time": t, "outcome": outcome, "new_instance_id": newID, "operation_id": operationID,
		"message": message}
	_, err := s.q.ResourceNoteRehydration(ctx, tx, ResourceNoteRehydrationParams{LastRehydration: store.JSON(note),
		UpdateTime: t, InstanceID: instanceID})
	return err
}

// rehydrateArgs is the job that creates a rehydration's new instance and
// then retires the old one.
type rehydrateArgs struct {
	OldInstanceID string `json:"old_instance_id"`
	NewInstanceID string `json:"new_instance_id"`
	OperationID   string `json:"operation_id"`
}

func (rehydrateArgs) Kind() string { return "placement.rehydrate" }

type rehydrateWorker struct {
	river.WorkerDefaults[rehydrateArgs]
	s *Service
}

func (w *rehydrateWorker) Work(ctx context.Context, job *river.Job[rehydrateArgs]) error {
	return w.s.rehydrate(ctx, job.Args, job.Attempt >= job.MaxAttempts)
}

func (w *rehydrateWorker) NextRetry(job *river.Job[rehydrateArgs]) time.Time {
	return time.Now().Add(w.s.backoff(job.Attempt))
}

// rehydrate creates the new instance through the SPRM under the new id (a
// retry resolves an earlier attempt's create: never created twice), then
// follows it until it is RUNNING (followNew). Only then does one
// transaction queue the old instance's deferred deletion, soft-remove the
// old resource, repoint the order and finish the operation: the order is
// never left without a running instance. Until that commits the order's
// current resource is the old one; after, the new one, and the old has its
// cleanup task. A new instance that fails, or does not run within
// Config.CopyTimeout, fails the rehydration and is deleted.
func (s *Service) rehydrate(ctx context.Context, a rehydrateArgs, last bool) error {
	r, err := s.Resource(ctx, "", a.NewInstanceID, true)
	if errors.Is(err, ErrResourceNotFound) {
		s.log.WarnContext(ctx, "rehydrate job for an unknown resource; dropped", "instance_id", a.NewInstanceID)
		return nil
	}
	if err != nil {
		return err
	}
	if r.RehydrationStatus == nil || *r.RehydrationStatus != rehydrationRunning {
		return nil // finished by an earlier attempt
	}
	copyData, err := s.copiesData(ctx, a, r)
	if err != nil {
		return err
	}
	if copyData {
		return s.rehydrateWithData(ctx, a, r, last)
	}
	in, err := s.cfg.SPRM.Instance(ctx, "", r.ID, true)
	switch {
	case errors.Is(err, sprm.ErrInstanceNotFound), err == nil && !answered(in.Status):
		in, err = s.cfg.SPRM.Create(ctx, s.createParams(r, nil))
	}
	switch {
	case err == nil:
		return s.followNew(ctx, a, r, in, false)
	case transient(err) && !last:
		return fmt.Errorf("rehydrate: create %s on %s: %w", r.ID, r.ProviderName, err)
	}
	s.log.WarnContext(ctx, "rehydration failed: the new instance was not created", "instance_id", r.ID,
		"provider", r.ProviderName, "error", err)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second) // the attempt may have timed out
	defer cancel()
	s.giveUp(ctx, r.ID, err)
	return s.failRehydration(ctx, a, err)
}

// rehydrationResponse is the response of a rehydrate operation.
type rehydrationResponse struct {
	OldInstanceID string `json:"old_instance_id"`
	NewInstanceID string `json:"new_instance_id"`
	ProviderName  string `json:"provider_name"`
}

// completeRehydration records, in one transaction, that the new resource
// replaces the old one for its order. The order's reconcile then moves the
// order to it, retires the old resource and finishes the operation
// ([Service.CompleteReplacementTx]), or, when the order was deleted
// meanwhile or no longer stands on the old resource, deletes the new one
// ([Service.AbandonReplacementTx]).
func (s *Service) completeRehydration(ctx context.Context, a rehydrateArgs, r Resource) error {
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		t := s.now()
		done := rehydrationDone
		n, err := s.q.ResourceRehydrationEnd(ctx, tx, ResourceRehydrationEndParams{RehydrationStatus: &done,
			UpdateTime: t, InstanceID: a.NewInstanceID})
		if err != nil || n == 0 {
			return err // n == 0: finished by an earlier attempt
		}
		cur, err := s.ResourceTx(ctx, tx, a.NewInstanceID)
		if err != nil {
			return err
		}
		if _, err := s.q.ResourceSetCreated(ctx, tx, ResourceSetCreatedParams{Status: string(cur.Status),
			UpdateTime: t, InstanceID: a.NewInstanceID}); err != nil {
			return fmt.Errorf("record create of %s: %w", a.NewInstanceID, err)
		}
		return s.recordTx(ctx, tx, reconcile.Change{OrderID: r.CatalogItemInstanceID, Kind: reconcile.KindReplaced,
			InstanceID: a.NewInstanceID, PreviousID: a.OldInstanceID, OperationID: a.OperationID,
			ProviderName: r.ProviderName, Status: string(cur.Status), Message: cur.StatusMessage})
	})
	if err != nil {
		return fmt.Errorf("complete rehydration of %s: %w", a.OldInstanceID, err)
	}
	s.log.InfoContext(ctx, "replacement created", "order_id", r.CatalogItemInstanceID,
		"old_instance_id", a.OldInstanceID, "new_instance_id", a.NewInstanceID, "provider", r.ProviderName)
	return nil
}

// CompleteReplacementTx ends a replacement its order has moved to, in tx
// (the order's reconcile): the old resource is removed and its instance's
// deletion deferred (queued; the provider is not contacted here), and the
// operation that asked for it, if any, finishes.
func (s *Service) CompleteReplacementTx(ctx context.Context, tx *store.Tx, c reconcile.Change) error {
	if err := s.cfg.SPRM.CleanupEnqueueTx(ctx, tx, c.PreviousID); err != nil &&
		!errors.Is(err, sprm.ErrInstanceNotFound) {
		return fmt.Errorf("queue deletion of %s: %w", c.PreviousID, err)
	}
	t := s.now()
	if _, err := s.q.ResourceMarkDeleting(ctx, tx, t, c.PreviousID); err != nil {
		return fmt.Errorf("remove resource %s: %w", c.PreviousID, err)
	}
	return s.finishOperationTx(ctx, tx, c.OperationID, operations.FinishParams{
		Response: rehydrationResponse{c.PreviousID, c.InstanceID, c.ProviderName},
	})
}

// AbandonReplacementTx ends a replacement whose order was deleted, or no
// longer stands on the old resource, before it could move, in tx (the
// order's reconcile): the new resource is deleted and the operation fails
// with [ErrOrderGone].
func (s *Service) AbandonReplacementTx(ctx context.Context, tx *store.Tx, c reconcile.Change) error {
	if err := s.DeleteTx(ctx, tx, c.InstanceID); err != nil && !errors.Is(err, ErrResourceNotFound) {
		return err
	}
	s.log.WarnContext(ctx, "order deleted or moved on during its replacement; new instance deleted",
		"order_id", c.OrderID, "new_instance_id", c.InstanceID)
	return s.finishOperationTx(ctx, tx, c.OperationID, operations.FinishParams{
		Err: fmt.Errorf("%w: order %s", ErrOrderGone, c.OrderID)})
}

// failRehydration ends a rehydration whose create failed: the new resource
// is FAILED and removed, the old stays current with a note saying why, the
// failure is recorded for the order and the operation finishes with the
// error; all in one transaction.
func (s *Service) failRehydration(ctx context.Context, a rehydrateArgs, cause error) error {
	return s.failRehydrationWith(ctx, a, cause, nil)
}

// failRehydrationWith is failRehydration that also runs also (when not
// nil) in its transaction, when that transaction ends the rehydration.
func (s *Service) failRehydrationWith(ctx context.Context, a rehydrateArgs, cause error, also func(*store.Tx) error) error {
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		t := s.now()
		failed := rehydrationFailed
		n, err := s.q.ResourceRehydrationEnd(ctx, tx, ResourceRehydrationEndParams{RehydrationStatus: &failed,
			UpdateTime: t, InstanceID: a.NewInstanceID})
		if err != nil || n == 0 {
			return err
		}
		if _, err := s.q.ResourceSetOutcome(ctx, tx, ResourceSetOutcomeParams{Outcome: string(provider.StatusFailed),
			OutcomeMessage: "rehydration failed: " + cause.Error(), UpdateTime: t, InstanceID: a.NewInstanceID}); err != nil {
			return err
		}
		if _, err := s.q.ResourceMarkDeleting(ctx, tx, t, a.NewInstanceID); err != nil {
			return err
		}
		if err := s.noteRehydrationTx(ctx, tx, a.OldInstanceID, "FAILED", a.NewInstanceID, a.OperationID,
			cause.Error()); err != nil {
			return err
		}
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		orderID, err := s.orderOf(ctx, tx, a.OldInstanceID)
		if err != nil {
			return err
		}
		if err := s.recordTx(ctx, tx, reconcile.Change{OrderID: orderID, Kind: reconcile.KindReplacementFailed,
			InstanceID: a.NewInstanceID, PreviousID: a.OldInstanceID, Status: string(provider.StatusFailed),
			Message: cause.Error()}); err != nil {
			return err
		}
		return s.finishOperationTx(ctx, tx, a.OperationID, operations.FinishParams{Err: cause})
	})
	if err != nil {
		return fmt.Errorf("record failed rehydration of %s: %w", a.OldInstanceID, err)
	}
	return nil
}

// finishOperationTx finishes the operation a replacement answers with;
// an update realised by replacement has none (id ""), and one finished by
// an earlier attempt stays as it is.
func (s *Service) finishOperationTx(ctx context.Context, tx *store.Tx, id string, p operations.FinishParams) error {
	if id == "" {
		return nil
	}
	_, err := s.cfg.Operations.FinishTx(ctx, tx, id, p)
	if errors.Is(err, operations.ErrAlreadyDone) {
		return nil
	}
	return err
}
