package sprm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/limits"
	"github.com/stewardhq/steward/internal/resourceid"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// namePattern is the rule for a provider's name and the service type ids it
// names: a lowercase DNS label. A client-chosen provider id (?id=) follows
// AEP-122 instead (package resourceid).
var namePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Register records a provider, idempotent by name (seed: registration
// flow): a new name is created (created=true); the same name again updates
// the registration in place and schedules a health check at once. id, when
// given, must match: a name held under another id, or an id held by another
// name, is ErrProviderIDConflict. The id defaults to the name.
func (s *Service) Register(ctx context.Context, id string, reg provider.Registration) (p Provider, created bool, err error) {
	defer s.registry.invalidate() // after the commit: see registrySnapshot
	if err := validateRegistration(id, reg, s.cfg.Egress); err != nil {
		return Provider{}, false, err
	}
	id = cmp.Or(id, reg.Name)
	t := s.now()
	var moved string // the endpoint before, on a re-registration
	err = s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		moved = ""
		existing, err := providerFromRow(s.q.ProviderLockByName(ctx, tx, reg.Name))
		switch {
		case errors.Is(err, ErrProviderNotFound):
			_, err = s.q.ProviderInsert(ctx, tx, ProviderInsertParams{ID: id, Name: reg.Name, Endpoint: reg.Endpoint,
				ServiceTypes: store.JSON(nonNil(reg.ServiceTypes)), Metadata: store.JSON(nonNilMap(reg.Metadata)),
				Capacity: store.JSON(nonNilMap(reg.Capacity)), Operations: store.JSON(nonNil(reg.Operations)),
				CallToken: reg.CallToken, Projects: store.JSON(servedProjects(ctx, nil)), NextCheckTime: t,
				CreateTime: t, UpdateTime: t})
			if errors.Is(err, store.ErrAlreadyExists) {
				return fmt.Errorf("%w: id %q belongs to another provider", ErrProviderIDConflict, id)
			}
			created = true
			return err
		case err != nil:
			return err
		case existing.ID != id:
			return fmt.Errorf("%w: %q is registered with id %q", ErrProviderIDConflict, reg.Name, existing.ID)
		}
		_, err = s.q.ProviderUpdateRegistration(ctx, tx, ProviderUpdateRegistrationParams{Endpoint: reg.Endpoint,
			EndpointChangeTime: t, ServiceTypes: store.JSON(nonNil(reg.ServiceTypes)), Metadata: store.JSON(nonNilMap(reg.Metadata)),
			Capacity: store.JSON(nonNilMap(reg.Capacity)), Operations: store.JSON(nonNil(reg.Operations)),
			CallToken: reg.CallToken, Projects: store.JSON(servedProjects(ctx, existing.Projects)), NextCheckTime: t,
			UpdateTime: t, ID: existing.ID, Version: existing.Version})
		moved = existing.Endpoint
		return err
	})
	if err != nil {
		return Provider{}, false, err
	}
	p, err = s.checkedProvider(ctx, id)
	if err == nil && created {
		s.log.InfoContext(ctx, "provider registered", "provider", p.Name, "endpoint", p.Endpoint, "service_types", p.ServiceTypes)
	}
	if err == nil {
		s.warnMoved(ctx, p.Name, moved, reg.Endpoint)
	}
	return p, created, err
}

// checkedProvider returns the provider id after a registration or update,
// once its first health check ran if its status is unknown: it takes
// orders only once its endpoint answered one, and the first runs at once,
// so that a provider that serves takes orders as soon as its registration
// is answered.
func (s *Service) checkedProvider(ctx context.Context, id string) (Provider, error) {
	p, err := s.Provider(ctx, id)
	if err != nil || p.Status != HealthUnknown {
		return p, err
	}
	if err := s.checkOne(ctx, p); err != nil {
		s.log.WarnContext(ctx, "first health check", "provider", p.Name, "error", err)
	}
	return s.Provider(ctx, id)
}

// Provider returns the provider with the id or name, or ErrProviderNotFound.
func (s *Service) Provider(ctx context.Context, idOrName string) (Provider, error) {
	return providerFromRow(s.q.ProviderGet(ctx, s.cfg.DB, idOrName))
}

// ListProvidersParams filters and pages providers.
type ListProvidersParams struct {
	ServiceType string
	Status      string
	Page        store.PageRequest
}

// Providers lists registered providers, oldest first.
func (s *Service) Providers(ctx context.Context, p ListProvidersParams) (store.Page[Provider], error) {
	page, err := store.ListPage(ctx, s.cfg.DB, s.q.providerList, p.Page, scanProvider,
		func(p Provider) store.Cursor { return store.Cursor{Time: p.CreateTime, ID: p.ID} },
		p.ServiceType, p.ServiceType, p.Status, p.Status)
	if err != nil {
		return page, fmt.Errorf("list providers: %w", err)
	}
	return page, nil
}

// ProviderPatch is a merge patch of a registration; nil fields stay.
type ProviderPatch struct {
	Endpoint     *string           `json:"endpoint"`
	ServiceTypes []string          `json:"service_types"`
	Metadata     map[string]string `json:"metadata"`
	Capacity     map[string]int64  `json:"capacity"`
	Operations   []string          `json:"operations"`
}

// UpdateProvider applies patch. ifMatch, when not nil, is the version the
// caller read: another writer's change in between gives store.ErrStale.
func (s *Service) UpdateProvider(ctx context.Context, idOrName string, patch ProviderPatch, ifMatch *int64) (Provider, error) {
	defer s.registry.invalidate() // after the commit: see registrySnapshot
	var id, moved, endpoint string
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		p, err := providerFromRow(s.q.ProviderGet(ctx, tx, idOrName))
		if err != nil {
			return err
		}
		if ifMatch != nil && *ifMatch != p.Version {
			return store.ErrStale
		}
		reg := provider.Registration{Name: p.Name, Endpoint: p.Endpoint, ServiceTypes: p.ServiceTypes,
			Metadata: p.Metadata, Capacity: p.Capacity, Operations: p.Operations, CallToken: p.CallToken}
		if patch.Endpoint != nil {
			reg.Endpoint = *patch.Endpoint
		}
		reg.ServiceTypes = cmpSlice(patch.ServiceTypes, reg.ServiceTypes)
		reg.Operations = cmpSlice(patch.Operations, reg.Operations)
		if patch.Metadata != nil {
			reg.Metadata = patch.Metadata
		}
		if patch.Capacity != nil {
			reg.Capacity = patch.Capacity
		}
		if err := validateRegistration("", reg, s.cfg.Egress); err != nil { // the stored id stays as it is
			return err
		}
		id = p.ID
		t := s.now()
		n, err := s.q.ProviderUpdateRegistration(ctx, tx, ProviderUpdateRegistrationParams{Endpoint: reg.Endpoint,
			EndpointChangeTime: t, ServiceTypes: store.JSON(reg.ServiceTypes), Metadata: store.JSON(nonNilMap(reg.Metadata)),
			Capacity: store.JSON(nonNilMap(reg.Capacity)), Operations: store.JSON(nonNil(reg.Operations)),
			CallToken: reg.CallToken, Projects: store.JSON(servedProjects(ctx, p.Projects)), NextCheckTime: p.nextCheckTime,
			UpdateTime: t, ID: p.ID, Version: p.Version})
		moved, endpoint = p.Endpoint, reg.Endpoint
		if err == nil && n == 0 {
			return store.ErrStale
		}
		return err
	})
	if err != nil {
		return Provider{}, err
	}
	p, err := s.checkedProvider(ctx, id)
	if err == nil {
		s.warnMoved(ctx, p.Name, moved, endpoint)
	}
	return p, err
}

// warnMoved logs a registration or patch that moved a provider from one
// endpoint to another: with two replicas registering one name, the last
// one silently took every instance's calls before (issue 22).
func (s *Service) warnMoved(ctx context.Context, name, from, to string) {
	if from == "" || from == to {
		return
	}
	s.log.WarnContext(ctx, "provider moved to another endpoint; Steward calls it there from now on",
		"provider", name, "previous_endpoint", from, "endpoint", to)
}

// Deregister removes a provider. It refuses (ErrProviderInUse) while the
// provider owns live instances, queued deletions included: they still need it.
func (s *Service) Deregister(ctx context.Context, idOrName string, ifMatch *int64) error {
	defer s.registry.invalidate() // after the commit: see registrySnapshot
	return s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		p, err := providerFromRow(s.q.ProviderGet(ctx, tx, idOrName))
		if err != nil {
			return err
		}
		if _, err := providerFromRow(s.q.ProviderLockByName(ctx, tx, p.Name)); err != nil {
			return err
		}
		if ifMatch != nil && *ifMatch != p.Version {
			return store.ErrStale
		}
		live, err := s.q.InstanceCountLiveByProvider(ctx, tx, p.Name)
		if err != nil {
			return fmt.Errorf("count instances of %s: %w", p.Name, err)
		}
		if live > 0 {
			return &InUseError{Provider: p.Name, LiveInstances: live}
		}
		if _, err := s.q.ProviderDelete(ctx, tx, p.ID, p.Version); err != nil {
			return err
		}
		s.log.InfoContext(ctx, "provider deregistered", "provider", p.Name)
		return nil
	})
}

// InUseError is ErrProviderInUse with the number of live instances.
type InUseError struct {
	Provider      string
	LiveInstances int64
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("provider %q still owns %d live instance(s)", e.Provider, e.LiveInstances)
}

// Unwrap makes errors.Is(err, ErrProviderInUse) true.
func (e *InUseError) Unwrap() error { return ErrProviderInUse }

// ProblemFields names the count.
func (e *InUseError) ProblemFields() map[string]any {
	return map[string]any{"provider_name": e.Provider, "live_instances": e.LiveInstances}
}

// validateRegistration checks reg, its endpoint against the address policy,
// and, when not empty, the id a client asks a new registration to have.
func validateRegistration(id string, reg provider.Registration, endpoints *egress.Policy) error {
	var errs invalid.Errors
	if id != "" && !resourceid.Valid(id) {
		errs.Add("id", "%s", resourceid.Message)
	}
	if !namePattern.MatchString(reg.Name) {
		errs.Add("name", "must be a lowercase DNS label (%s)", namePattern)
	}
	if msg := endpointProblem(reg.Endpoint, endpoints); msg != "" {
		errs.Add("endpoint", "%s", msg)
	}
	if len(reg.ServiceTypes) == 0 {
		errs.Add("service_types", "must name at least one service type")
	}
	for i, t := range reg.ServiceTypes {
		if !namePattern.MatchString(t) {
			errs.Add(fmt.Sprintf("service_types[%d]", i), "must be a service type id")
		}
	}
	for k, v := range reg.Capacity {
		if v < 0 {
			errs.Add("capacity."+k, "must not be negative")
		}
	}
	// Metadata are labels (placement policies match them): held to the
	// rules of labels once DCM's objects are flattened, which the
	// document cannot count.
	limits.CheckLabels(&errs, "metadata", reg.Metadata)
	if len(reg.Capacity) > limits.MaxLabels {
		errs.Add("capacity", "must have at most %d dimensions, not %d", limits.MaxLabels, len(reg.Capacity))
	}
	return errs.Err()
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

func cmpSlice[T any](a, b []T) []T {
	if a != nil {
		return a
	}
	return b
}

// servedProjects are the projects a registration by ctx's principal lets
// the provider serve: a provider's service account's grant (its token's
// projects), else (an admin) what the provider served before, or every
// project for a new one.
func servedProjects(ctx context.Context, before []string) []string {
	if who, ok := auth.PrincipalFrom(ctx); ok && who.Provider != "" {
		return nonNil(who.Projects)
	}
	if before != nil {
		return before
	}
	return []string{auth.AllProjects}
}
