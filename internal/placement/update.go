package placement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// UpdateParams asks to realise a new intent for an order whose current
// resource is InstanceID.
type UpdateParams struct {
	OrderID    string
	InstanceID string
	// NewInstanceID is the id of the replacing resource, used only when the
	// update cannot be made in place.
	NewInstanceID string
	// OriginalRequest is the new intent, Placement what the policy chain
	// made of it.
	OriginalRequest map[string]any
	Placement       Placement
}

// UpdateResult says how an update will be realised.
type UpdateResult struct {
	// Replacement is true when a new resource (NewInstanceID) will be
	// created and the current one retired once it is accepted; false when
	// the current resource is updated in place.
	Replacement bool
	// NewInstanceID is the replacing resource's id when Replacement.
	NewInstanceID string
}

// UpdateTx starts realising a new intent for an order's resource, in the
// caller's transaction. When the placement keeps the resource's provider and
// that provider registered the update operation, the resource takes the new
// intent and a job updates its instance in place (provider PUT);
// otherwise a new resource is recorded and created as in a rehydration,
// and the current one is retired once the new one is accepted. Either way
// the outcome is recorded for the order's reconcile: the update accepted
// or refused (in place), or the replacement done or failed.
func (s *Service) UpdateTx(ctx context.Context, tx *store.Tx, p UpdateParams) (UpdateResult, error) {
	return s.updateTx(ctx, tx, p, true)
}

// updateTx is UpdateTx; allowInPlace false always replaces.
func (s *Service) updateTx(ctx context.Context, tx *store.Tx, p UpdateParams, allowInPlace bool) (UpdateResult, error) {
	cur, err := s.ResourceTx(ctx, tx, p.InstanceID)
	if err != nil {
		return UpdateResult{}, err
	}
	if cur.DeletedAt != nil {
		return UpdateResult{}, fmt.Errorf("%w: %s", ErrResourceNotFound, p.InstanceID)
	}
	inPlace := false
	if allowInPlace && p.Placement.ProviderName == cur.ProviderName {
		if inPlace, err = s.cfg.SPRM.ProviderSupportsTx(ctx, tx, cur.ProviderName, provider.OperationUpdate); err != nil {
			return UpdateResult{}, err
		}
	}
	t := s.now()
	if inPlace {
		if _, err := s.q.ResourceSetRequest(ctx, tx, ResourceSetRequestParams{
			OriginalRequest: store.JSON(p.OriginalRequest), ValidatedRequest: store.JSON(p.Placement.Spec),
			PolicyStatus: p.Placement.PolicyStatus, UpdateTime: t, InstanceID: cur.ID}); err != nil {
			return UpdateResult{}, fmt.Errorf("record update of %s: %w", cur.ID, err)
		}
		return UpdateResult{}, s.cfg.Jobs.InsertTx(ctx, tx, updateArgs{InstanceID: cur.ID}, s.insertOpts())
	}
	if err := s.checkNoRehydration(ctx, tx, cur.CatalogItemInstanceID); err != nil {
		return UpdateResult{}, err
	}
	if _, err := s.q.ResourceInsertRehydration(ctx, tx, ResourceInsertRehydrationParams{InstanceID: p.NewInstanceID,
		CatalogItemInstanceID: cur.CatalogItemInstanceID, Project: cur.Project, ServiceType: cur.ServiceType,
		Labels: store.JSON(nonNilMap(cur.Labels)), OriginalRequest: store.JSON(p.OriginalRequest),
		ValidatedRequest: store.JSON(p.Placement.Spec), ProviderName: p.Placement.ProviderName,
		PolicyStatus: p.Placement.PolicyStatus, CreateTime: t, UpdateTime: t, RehydratedFrom: &cur.ID}); err != nil {
		return UpdateResult{}, fmt.Errorf("record resource %s: %w", p.NewInstanceID, err)
	}
	return UpdateResult{Replacement: true, NewInstanceID: p.NewInstanceID}, s.cfg.Jobs.InsertTx(ctx, tx, rehydrateArgs{
		OldInstanceID: cur.ID, NewInstanceID: p.NewInstanceID,
	}, s.insertOpts())
}

// updateArgs is the job that updates a resource's instance in place
// through the SPRM, with the validated request the resource now holds.
type updateArgs struct {
	InstanceID string `json:"instance_id"`
}

func (updateArgs) Kind() string { return "placement.update" }

type updateWorker struct {
	river.WorkerDefaults[updateArgs]
	s *Service
}

func (w *updateWorker) Work(ctx context.Context, job *river.Job[updateArgs]) error {
	return w.s.update(ctx, job.Args.InstanceID, job.Attempt >= job.MaxAttempts)
}

func (w *updateWorker) NextRetry(job *river.Job[updateArgs]) time.Time {
	return time.Now().Add(w.s.backoff(job.Attempt))
}

// update sends the resource's validated request to its instance. The SPRM
// records the accepted update and the status reports that follow; the
// update's outcome is recorded for the order (a refusal, or the last failed
// attempt, as FAILED, so its lifecycle takes the error edge). A provider that lost
// the update operation since the update was planned gets a replacement.
func (s *Service) update(ctx context.Context, instanceID string, last bool) error {
	r, err := s.Resource(ctx, "", instanceID, true)
	if errors.Is(err, ErrResourceNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.DeletedAt != nil {
		return nil // deleted meanwhile: nothing to update
	}
	_, err = s.cfg.SPRM.Update(ctx, sprm.UpdateParams{ID: r.ID, Spec: r.ValidatedRequest})
	switch {
	case err == nil:
		// The order waited for this: the status from here on is the new
		// spec's (reports older than the update are ignored by the SPRM).
		return s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
			cur, err := s.ResourceTx(ctx, tx, r.ID)
			if err != nil {
				return err
			}
			return s.recordTx(ctx, tx, reconcile.Change{OrderID: r.CatalogItemInstanceID, Kind: reconcile.KindUpdated,
				InstanceID: r.ID, Status: string(cur.Status), Message: cur.StatusMessage})
		})
	case errors.Is(err, sprm.ErrUpdateNotSupported):
		return s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
			res, err := s.updateTx(ctx, tx, UpdateParams{OrderID: r.CatalogItemInstanceID, InstanceID: r.ID,
				NewInstanceID: store.NewID(), OriginalRequest: r.OriginalRequest,
				Placement: Placement{Spec: r.ValidatedRequest, ProviderName: r.ProviderName,
					PolicyStatus: r.PolicyStatus}}, false)
			if err != nil {
				return err
			}
			return s.recordTx(ctx, tx, reconcile.Change{OrderID: r.CatalogItemInstanceID, Kind: reconcile.KindReplacing,
				InstanceID: res.NewInstanceID, PreviousID: r.ID})
		})
	case transient(err) && !last:
		return fmt.Errorf("update %s on %s: %w", r.ID, r.ProviderName, err)
	}
	s.log.WarnContext(ctx, "update failed", "instance_id", r.ID, "provider", r.ProviderName, "error", err)
	return s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		return s.recordTx(ctx, tx, reconcile.Change{OrderID: r.CatalogItemInstanceID, Kind: reconcile.KindUpdated,
			InstanceID: r.ID, Status: string(provider.StatusFailed), Message: "update failed: " + err.Error()})
	})
}
