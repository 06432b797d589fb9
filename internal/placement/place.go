package placement

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/policy"
	"github.com/stewardhq/steward/internal/store"
)

// PlaceParams is a request to place: the spec built for an order.
type PlaceParams struct {
	// Spec names its service type in spec.service_type. It is not modified.
	Spec    map[string]any
	Labels  map[string]string
	Project string
	// CheckWithProvider asks the provider chosen whether it would accept
	// the validated spec (its validate operation), so that its refusal is
	// the request's answer (sprm.SpecRefusedError) and not a failure after
	// it was acknowledged. Only outside a transaction: it is an HTTP call.
	CheckWithProvider bool
}

// SpecRefusedError is a Place whose provider refuses the validated spec
// (CheckWithProvider); Err is the provider's refusal
// (*sprm.SpecRefusedError).
type SpecRefusedError struct{ Err error }

func (e *SpecRefusedError) Error() string { return e.Err.Error() }

// Unwrap exposes the provider's refusal.
func (e *SpecRefusedError) Unwrap() error { return e.Err }

// Placement is the decision for a request.
type Placement struct {
	// Spec is the validated request: the spec after the policy chain.
	Spec         map[string]any
	ProviderName string
	// PolicyStatus is policy.StatusApproved or policy.StatusModified.
	PolicyStatus string
}

// Place runs the policy chain on the request and chooses its provider: the
// one a policy selected, else policy.PickProvider's among the registered
// providers. It writes nothing. Errors are the chain's ([*policy.RejectedError],
// [*policy.ConflictError], …) or policy.ErrNoProvider.
func (s *Service) Place(ctx context.Context, p PlaceParams) (Placement, error) {
	providers, err := s.cfg.Providers.AvailableProviders(ctx)
	if err != nil {
		return Placement{}, fmt.Errorf("list providers: %w", err)
	}
	providers = policy.ServingProject(providers, p.Project)
	res, err := s.cfg.Policy.Evaluate(ctx, policy.EvaluateParams{
		Spec: p.Spec, Labels: p.Labels, Project: p.Project, AvailableProviders: providers,
	})
	if err != nil {
		return Placement{}, err
	}
	// A policy's patch may break the service type's schema; the request
	// must fail now, not after it was acknowledged and sent to a provider.
	if s.cfg.Specs != nil && res.Status == policy.StatusModified {
		serviceType, _ := res.Spec["service_type"].(string)
		if err := s.cfg.Specs.ValidateSpec(ctx, serviceType, res.Spec); err != nil {
			return Placement{}, &SpecBrokenError{Err: err}
		}
	}
	name := res.SelectedProvider
	if name == "" {
		serviceType, _ := p.Spec["service_type"].(string)
		picked, err := policy.PickProvider(policy.PickParams{
			Providers: providers, ServiceType: serviceType, Constraints: res.ProviderConstraints, Project: p.Project,
		})
		if err != nil {
			return Placement{}, err
		}
		name = picked.Name
	}
	if p.CheckWithProvider {
		if err := s.cfg.SPRM.CheckSpec(ctx, name, res.Spec); err != nil {
			return Placement{}, &SpecRefusedError{Err: err}
		}
	}
	return Placement{Spec: res.Spec, ProviderName: name, PolicyStatus: res.Status}, nil
}

// RecordParams is a placed request to store.
type RecordParams struct {
	InstanceID string
	// OrderID is the catalog item instance the resource realises.
	OrderID string
	Project string
	Labels  map[string]string
	// OriginalRequest is the intent, as given to Place.
	OriginalRequest map[string]any
	Placement       Placement
}

// RecordTx stores the resource (status PENDING) in the caller's transaction
// and queues its provisioning in the same transaction. A taken instance id
// is an error wrapping store.ErrAlreadyExists.
func (s *Service) RecordTx(ctx context.Context, tx *store.Tx, p RecordParams) error {
	serviceType, _ := p.OriginalRequest["service_type"].(string)
	t := s.now()
	if _, err := s.q.ResourceInsert(ctx, tx, ResourceInsertParams{InstanceID: p.InstanceID,
		CatalogItemInstanceID: p.OrderID, Project: p.Project, ServiceType: serviceType,
		Labels: store.JSON(nonNilMap(p.Labels)), OriginalRequest: store.JSON(p.OriginalRequest),
		ValidatedRequest: store.JSON(p.Placement.Spec), ProviderName: p.Placement.ProviderName,
		PolicyStatus: p.Placement.PolicyStatus, CreateTime: t, UpdateTime: t}); err != nil {
		return fmt.Errorf("record resource %s: %w", p.InstanceID, err)
	}
	return s.cfg.Jobs.InsertTx(ctx, tx, provisionArgs{InstanceID: p.InstanceID}, s.insertOpts())
}

// DeleteTx marks the resource deleted in the caller's transaction and
// queues the deletion of its instance through the SPRM. It is idempotent
// in effect: a second call queues a job that finds the instance already
// deleted. A missing resource is [ErrResourceNotFound].
func (s *Service) DeleteTx(ctx context.Context, tx *store.Tx, instanceID string) error {
	t := s.now()
	n, err := s.q.ResourceMarkDeleting(ctx, tx, t, instanceID)
	if err != nil {
		return fmt.Errorf("mark resource %s deleted: %w", instanceID, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s", ErrResourceNotFound, instanceID)
	}
	return s.cfg.Jobs.InsertTx(ctx, tx, deprovisionArgs{InstanceID: instanceID}, s.insertOpts())
}

// ResourceTx returns the resource with the instance id, read in tx,
// deleted or not.
func (s *Service) ResourceTx(ctx context.Context, tx *store.Tx, instanceID string) (Resource, error) {
	// ResourceGet and ResourceList read a resource's row: scanResource
	// decodes that one shape for both. Project "" is any project.
	return scanResource(tx.QueryRow(ctx, s.q.resourceGet, instanceID, "", ""))
}

// Resource returns the resource with the instance id in project ("" for
// any). A deleted resource is [ErrResourceNotFound] unless showDeleted.
func (s *Service) Resource(ctx context.Context, project, instanceID string, showDeleted bool) (Resource, error) {
	r, err := scanResource(s.cfg.DB.QueryRow(ctx, s.q.resourceGet, instanceID, project, project))
	if err == nil && r.DeletedAt != nil && !showDeleted {
		return Resource{}, ErrResourceNotFound
	}
	return r, err
}

// ListResourcesParams filters and pages resources.
type ListResourcesParams struct {
	Project               string
	CatalogItemInstanceID string
	ProviderName          string
	ShowDeleted           bool
	Page                  store.PageRequest
}

// Resources lists a project's resources, oldest first.
func (s *Service) Resources(ctx context.Context, p ListResourcesParams) (store.Page[Resource], error) {
	page, err := store.ListPage(ctx, s.cfg.DB, s.q.resourceList, p.Page, scanResource,
		func(r Resource) store.Cursor { return store.Cursor{Time: r.CreateTime, ID: r.ID} },
		p.Project, p.CatalogItemInstanceID, p.CatalogItemInstanceID, p.ProviderName, p.ProviderName, p.ShowDeleted)
	if err != nil {
		return page, fmt.Errorf("list resources: %w", err)
	}
	return page, nil
}

func (s *Service) insertOpts() *river.InsertOpts {
	return &river.InsertOpts{MaxAttempts: s.cfg.MaxAttempts, Queue: s.cfg.JobQueue}
}

var errNoIntent = errors.New("resource has no intent")
