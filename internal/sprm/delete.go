package sprm

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// Instance returns the instance id of project ("" for any project). A
// deleted instance is ErrInstanceNotFound unless showDeleted.
func (s *Service) Instance(ctx context.Context, project, id string, showDeleted bool) (Instance, error) {
	in, err := s.instance(ctx, project, id)
	if err == nil && in.DeletedAt != nil && !showDeleted {
		return Instance{}, ErrInstanceNotFound
	}
	return in, err
}

// showInstance reads an instance as Instance does, for a view only: its
// spec, outputs and sync result are kept as stored, undecoded, as a list
// reads them (a GET spent a quarter of its CPU decoding and encoding them
// again).
func (s *Service) showInstance(ctx context.Context, project, id string, showDeleted bool) (Instance, error) {
	in, err := scanListedInstance(s.cfg.DB.QueryRow(ctx, s.q.instanceGet, id, project, project))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Instance{}, ErrInstanceNotFound
	case err == nil && in.DeletedAt != nil && !showDeleted:
		return Instance{}, ErrInstanceNotFound
	}
	return in, err
}

// ListInstancesParams filters and pages instances.
type ListInstancesParams struct {
	Project      string
	ProviderName string
	ServiceType  string
	Status       string
	ShowDeleted  bool
	Page         store.PageRequest
}

// Instances lists a project's instances, oldest first, for the API: each
// carries its spec, outputs and sync result as stored, undecoded (Spec,
// Outputs and Synced are nil); [Service.Instance] reads one whole.
func (s *Service) Instances(ctx context.Context, p ListInstancesParams) (store.Page[Instance], error) {
	page, err := store.ListPage(ctx, s.cfg.DB, s.q.instanceList, p.Page, scanListedInstance,
		func(i Instance) store.Cursor { return store.Cursor{Time: i.CreateTime, ID: i.ID} },
		p.Project, p.ProviderName, p.ProviderName, p.ServiceType, p.ServiceType, p.Status, p.Status, p.ShowDeleted)
	if err != nil {
		return page, fmt.Errorf("list instances: %w", err)
	}
	return page, nil
}

// Delete deletes an instance. Deferred (rehydration's delete of the old
// resource) records a cleanup task and never contacts the provider.
// Otherwise the provider is called now: its answer sets the status
// (DELETING until it reports DELETED; a 404 is DELETED at once), and a
// provider that is unhealthy or fails the call gets the deletion queued
// instead. Deleting an instance whose deletion is already queued returns
// it unchanged.
func (s *Service) Delete(ctx context.Context, project, id string, deferred bool) (Instance, error) {
	return s.DeleteIfMatch(ctx, project, id, deferred, nil)
}

// DeleteIfMatch is Delete with the HTTP API's If-Match precondition.
// ifMatch, when not nil, is the version the caller read: it is checked in
// the transaction of the deletion's first write (the cleanup task queued,
// or the status DELETING set before the provider is called), so another
// writer's change in between gives store.ErrStale with nothing queued and
// the provider not called. It is checked before the already-queued case
// too: the caller's view of the instance is out of date either way.
func (s *Service) DeleteIfMatch(ctx context.Context, project, id string, deferred bool, ifMatch *int64) (Instance, error) {
	in, err := s.Instance(ctx, project, id, false)
	if err != nil {
		return in, err
	}
	if ifMatch != nil && *ifMatch != in.Version {
		return Instance{}, store.ErrStale
	}
	if in.Deletion != nil {
		return in, nil
	}
	if deferred {
		return s.queueDeletion(ctx, in, "deferred", ifMatch)
	}
	prov, err := s.Provider(ctx, in.ProviderName)
	if errors.Is(err, ErrProviderNotFound) || (err == nil && prov.Status == HealthUnavailable) {
		return s.queueDeletion(ctx, in, "provider unavailable", ifMatch)
	}
	if err != nil {
		return Instance{}, err
	}
	marked, current, err := s.markDeleting(ctx, id, ifMatch)
	if err != nil || !marked {
		return current, err
	}
	got, err := s.cfg.Providers.Delete(prov.calling(ctx), prov.Endpoint, id)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	switch {
	case errors.Is(err, provider.ErrNotFound) || (err == nil && got.Status == provider.StatusDeleted):
		deleted := InstanceMarkDeletedParams{DeletedAt: s.now(), DeleteTime: s.now(), UpdateTime: s.now(), ID: id}
		if _, _, err := s.setStatus(wctx, InstanceStatus{InstanceID: id, Status: provider.StatusDeleted},
			func(tx *store.Tx) ([]string, error) { return s.q.InstanceMarkDeleted(wctx, tx, deleted) }); err != nil {
			return Instance{}, fmt.Errorf("mark instance deleted: %w", err)
		}
	case err != nil:
		s.log.WarnContext(ctx, "provider delete failed; queued for cleanup", "instance_id", id, "provider", prov.Name, "error", err)
		// The precondition held at the DELETING write; this is its sequel.
		return s.queueDeletion(wctx, in, "provider delete failed", nil)
	}
	return s.instance(wctx, project, id)
}

// markDeleting sets the instance's status DELETING before its provider is
// called, under the If-Match precondition, and returns the instance as
// written. An instance that became DELETED since the caller read it (its
// provider reported so meanwhile) is left DELETED and marked is false: it
// has nothing left to delete, and DELETING would undo its end for good.
func (s *Service) markDeleting(ctx context.Context, id string, ifMatch *int64) (marked bool, in Instance, err error) {
	t := s.now()
	deleting := InstanceMarkDeletingParams{DeleteTime: t, UpdateTime: t, ResyncTime: s.resyncDue(provider.StatusDeleting, t), ID: id}
	n, in, err := s.setStatusIf(ctx, ifMatch, InstanceStatus{InstanceID: id, Status: provider.StatusDeleting},
		func(tx *store.Tx) ([]string, error) { return s.q.InstanceMarkDeleting(ctx, tx, deleting) })
	if err != nil {
		return false, Instance{}, fmt.Errorf("mark instance deleting: %w", err)
	}
	return n > 0, in, nil
}

// queueDeletion records a cleanup task for the instance, if it is still at
// version ifMatch (when not nil; see checkVersionTx).
func (s *Service) queueDeletion(ctx context.Context, in Instance, why string, ifMatch *int64) (Instance, error) {
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := s.checkVersionTx(ctx, tx, in.ID, ifMatch); err != nil {
			return err
		}
		_, err := s.enqueueCleanupTx(ctx, tx, in.ID, in.ProviderName, in.ServiceType)
		return err
	})
	if err != nil {
		return Instance{}, err
	}
	s.log.InfoContext(ctx, "deletion queued for cleanup", "instance_id", in.ID, "provider", in.ProviderName, "why", why)
	return s.instance(ctx, in.Project, in.ID)
}

// CleanupEnqueueTx queues the deletion of an instance on its provider in the
// caller's transaction (placement's rehydration uses it). It is idempotent:
// an instance has at most one task.
func (s *Service) CleanupEnqueueTx(ctx context.Context, tx *store.Tx, instanceID string) error {
	in, err := instanceFromRow(s.q.InstanceGet(ctx, tx, instanceID, ""))
	if err != nil {
		return err
	}
	_, err = s.enqueueCleanupTx(ctx, tx, in.ID, in.ProviderName, in.ServiceType)
	return err
}

func (s *Service) enqueueCleanupTx(ctx context.Context, tx *store.Tx, instanceID, providerName, serviceType string) (string, error) {
	t := s.now()
	id := store.NewID()
	if _, err := s.q.CleanupTaskInsert(ctx, tx, CleanupTaskInsertParams{ID: id, InstanceID: instanceID,
		ProviderName: providerName, ServiceType: serviceType, RequestedAt: t, CreateTime: t, UpdateTime: t}); err != nil {
		return "", fmt.Errorf("queue cleanup of %s: %w", instanceID, err)
	}
	if _, err := s.q.InstanceDeleteRequested(ctx, tx, t, instanceID); err != nil {
		return "", fmt.Errorf("note the deletion of %s: %w", instanceID, err)
	}
	return id, nil
}
