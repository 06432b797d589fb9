package sprm

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/limits"
	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// UpdateParams asks to change an instance in place.
type UpdateParams struct {
	ID string
	// Spec is the instance's new spec; its service_type must stay the
	// instance's.
	Spec map[string]any
}

// Update changes an instance in place on its provider (API.md: PUT
// {endpoint}/api/v1/services/{instance_id}, for providers registered with
// the "update" operation) and records the new spec with the status the
// provider answered (usually PROVISIONING; RUNNING or FAILED follow as
// status reports). Reports observed before the update was sent are ignored
// after it.
// Errors: [ErrInstanceNotFound] (also when the provider no longer holds it),
// [ErrUpdateNotSupported], [ErrProviderUnavailable], a refusal as
// *ProviderError, a bad spec as [*invalid.Error]; anything else is
// transient (the provider was not reached or did not answer) and the
// update may be repeated: providers must treat an update to the spec an
// instance already has as done.
func (s *Service) Update(ctx context.Context, p UpdateParams) (Instance, error) {
	in, err := s.instance(ctx, "", p.ID)
	if err != nil {
		return Instance{}, err
	}
	if in.DeletedAt != nil {
		return Instance{}, fmt.Errorf("%w: %s was deleted", ErrInstanceNotFound, p.ID)
	}
	if st, _ := p.Spec["service_type"].(string); st != in.ServiceType {
		return Instance{}, invalid.New("spec.service_type", "must stay %q", in.ServiceType)
	}
	if err := s.cfg.Specs.ValidateSpec(ctx, in.ServiceType, p.Spec); err != nil {
		return Instance{}, err
	}
	prov, err := providerFromRow(s.q.ProviderGetByName(ctx, s.cfg.DB, in.ProviderName))
	if err != nil {
		return Instance{}, err
	}
	if !slices.Contains(prov.Operations, provider.OperationUpdate) {
		return Instance{}, fmt.Errorf("%w: %q", ErrUpdateNotSupported, prov.Name)
	}
	if !usable(prov) {
		return Instance{}, fmt.Errorf("%w: %q is %s", ErrProviderUnavailable, prov.Name, prov.Status)
	}
	// Reports the provider makes once it has the update are newer than
	// this; the ones before are of the old spec.
	sent := s.now()
	got, err := s.cfg.Providers.Update(prov.calling(ctx), prov.Endpoint, provider.UpdateRequest{
		InstanceID: p.ID, ServiceType: in.ServiceType, Spec: p.Spec,
	})
	var refused *provider.ResponseError
	switch {
	case errors.Is(err, provider.ErrNotFound):
		return Instance{}, fmt.Errorf("%w: provider %q no longer holds %s", ErrInstanceNotFound, prov.Name, p.ID)
	case errors.As(err, &refused):
		return Instance{}, refusal(prov, refused)
	case err != nil:
		return Instance{}, fmt.Errorf("update %s on %q: %w", p.ID, prov.Name, err)
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	status := got.Status
	if !status.Valid() || status == provider.StatusPending {
		status = provider.StatusProvisioning
	}
	got.Message = limits.Truncate(got.Message, limits.MaxMessage) // as recordCreated keeps it
	// The row keeps a report newer than the update; the change recorded is
	// the status the row has.
	t := s.now()
	err = s.cfg.DB.InTx(wctx, func(tx *store.Tx) error {
		orders, err := s.q.InstanceRecordUpdate(wctx, tx, InstanceRecordUpdateParams{Spec: store.JSON(p.Spec), SentTime: sent,
			Status: string(status), StatusMessage: got.Message, UpdateTime: t, StatusTime: &t,
			ResyncTime: s.resyncDue(status, t), Outputs: outputsArg(s.answeredOutputs(ctx, prov.Name, p.ID, got.Outputs)), ID: p.ID})
		if err != nil || len(orders) == 0 {
			return err
		}
		cur, err := instanceFromRow(s.q.InstanceGet(wctx, tx, p.ID, ""))
		if err != nil {
			return err
		}
		return s.recordChangeTx(wctx, tx, orders[0], reconcile.KindStatus, InstanceStatus{InstanceID: p.ID, Status: cur.Status,
			Message: cur.StatusMessage})
	})
	if err != nil {
		return Instance{}, fmt.Errorf("record update of %s: %w", p.ID, err)
	}
	s.log.InfoContext(ctx, "instance updated in place", "instance_id", p.ID, "provider", prov.Name, "status", status)
	return s.instance(wctx, "", p.ID)
}

// ProviderSupportsTx reports whether the provider registered the operation
// (provider.OperationUpdate, ...), read in tx. An unknown provider is
// ErrProviderNotFound.
func (s *Service) ProviderSupportsTx(ctx context.Context, tx *store.Tx, name, operation string) (bool, error) {
	prov, err := providerFromRow(s.q.ProviderGetByName(ctx, tx, name))
	if err != nil {
		return false, err
	}
	return slices.Contains(prov.Operations, operation), nil
}
