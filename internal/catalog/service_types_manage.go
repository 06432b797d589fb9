package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/resourceid"
	"github.com/stewardhq/steward/internal/schema"
	"github.com/stewardhq/steward/internal/store"
)

// ServiceTypeParams is a service type to create or to replace one with
// (PUT). Fields are as in [ServiceType]; zero values take the defaults
// (lifecycle simple, on_parent_delete cascade, no adapters).
type ServiceTypeParams struct {
	// ID is the type's id (AEP-122, package resourceid); required.
	ID                string          `json:"-"`
	Schema            json.RawMessage `json:"schema"`
	Lifecycle         string          `json:"lifecycle"`
	IdentityAttribute *string         `json:"identity_attribute"`
	ParentServiceType *string         `json:"parent_service_type"`
	OnParentDelete    string          `json:"on_parent_delete"`
	RequiredAdapters  []string        `json:"required_adapters"`
	Runtime           *Runtime        `json:"runtime"`
}

func (p ServiceTypeParams) serviceType() ServiceType {
	st := ServiceType{ID: p.ID, Schema: p.Schema, Lifecycle: p.Lifecycle, IdentityAttribute: p.IdentityAttribute,
		ParentServiceType: p.ParentServiceType, OnParentDelete: p.OnParentDelete,
		RequiredAdapters: p.RequiredAdapters, Runtime: p.Runtime}
	normalizeServiceType(&st)
	return st
}

// ServiceType returns the service type with the id, or an error wrapping
// [ErrServiceTypeNotFound].
func (s *Service) ServiceType(ctx context.Context, id string) (ServiceType, error) {
	return s.cfg.ServiceTypes.Get(ctx, id)
}

// RequiredAdapters returns the adapters a service type requires, shared:
// the caller must not change the slice. It copies nothing, for the Ready
// aggregation, which asks on every order it shows.
func (s *Service) RequiredAdapters(ctx context.Context, id string) ([]string, error) {
	e, err := s.cfg.ServiceTypes.entry(ctx, s.cfg.DB, id)
	if err != nil {
		return nil, err
	}
	return e.serviceType.RequiredAdapters, nil
}

// HasRuntime reports whether a service type declares a runtime (its
// orders have a Healthy condition). Like RequiredAdapters it copies
// nothing: every order shown asks.
func (s *Service) HasRuntime(ctx context.Context, id string) (bool, error) {
	e, err := s.cfg.ServiceTypes.entry(ctx, s.cfg.DB, id)
	if err != nil {
		return false, err
	}
	return e.serviceType.Runtime != nil, nil
}

// RequiredAdaptersByType returns the required adapters of every service
// type, built-in and stored, for the sentinel to choose what it watches.
func (s *Service) RequiredAdaptersByType(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	after := ""
	for {
		rows, err := s.cfg.ServiceTypes.List(ctx, after, store.MaxPageSize)
		if err != nil {
			return nil, err
		}
		for _, st := range rows {
			out[st.ID] = st.RequiredAdapters
		}
		if len(rows) <= store.MaxPageSize {
			return out, nil
		}
		after = rows[store.MaxPageSize-1].ID
	}
}

// ValidateSpec checks spec against its service type's schema (see
// [ServiceTypes.ValidateSpec]).
func (s *Service) ValidateSpec(ctx context.Context, serviceType string, spec map[string]any) error {
	return s.cfg.ServiceTypes.ValidateSpec(ctx, serviceType, spec)
}

// Schema returns the compiled schema of a service type, for the checks of
// x-modifier.
func (s *Service) Schema(ctx context.Context, serviceType string) (*schema.Schema, error) {
	e, err := s.cfg.ServiceTypes.entry(ctx, s.cfg.DB, serviceType)
	if err != nil {
		return nil, err
	}
	return e.schema, nil
}

// ServiceTypes returns a page of the service types, built-in and stored,
// sorted by id.
func (s *Service) ServiceTypes(ctx context.Context, page store.PageRequest) (store.Page[ServiceType], error) {
	size := max(page.Size, 1)
	if page.Size == 0 {
		size = store.DefaultPageSize
	}
	_, after := page.Keyset()
	rows, err := s.cfg.ServiceTypes.List(ctx, after, size)
	if err != nil {
		return store.Page[ServiceType]{}, err
	}
	return store.NewPage(rows, page, func(st ServiceType) store.Cursor {
		return store.Cursor{Time: serviceTypeCursorTime, ID: st.ID}
	}), nil
}

// CreateServiceType stores a new service type after checking it (an
// [*invalid.Error] naming each bad field: see [checkServiceType] and
// [Service.checkReferences]). A taken id, built-in ones included, is
// [ErrServiceTypeExists].
func (s *Service) CreateServiceType(ctx context.Context, p ServiceTypeParams) (ServiceType, error) {
	st := p.serviceType()
	if err := s.checkNewServiceType(st); err != nil {
		return ServiceType{}, err
	}
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := s.checkReferences(ctx, st, s.parentReader(ctx, tx)); err != nil {
			return err
		}
		cols, err := serviceTypeColumns(st)
		if err != nil {
			return err
		}
		cols.CreateTime = s.now()
		cols.UpdateTime = cols.CreateTime
		_, err = s.q.ServiceTypeInsert(ctx, tx, cols)
		if errors.Is(err, store.ErrAlreadyExists) {
			return fmt.Errorf("service type %q: %w", st.ID, ErrServiceTypeExists)
		}
		return err
	})
	if err != nil {
		return ServiceType{}, err
	}
	s.log.InfoContext(ctx, "service type created", "service_type", st.ID, "lifecycle", st.Lifecycle)
	return s.ServiceType(ctx, st.ID)
}

func (s *Service) checkNewServiceType(st ServiceType) error {
	switch {
	case st.ID == "":
		return invalid.New("id", "is required (?id=)")
	case !resourceid.Valid(st.ID):
		return resourceid.Check("id", st.ID)
	case s.cfg.ServiceTypes.IsBuiltin(st.ID):
		return fmt.Errorf("service type %q is built in: %w", st.ID, ErrServiceTypeExists)
	}
	return checkServiceType(st)
}

// ReplaceServiceType replaces the stored service type p.ID (PUT) after
// checking the new definition as [Service.CreateServiceType] does. It
// refuses, with a [*ServiceTypeInUseError] ([ErrServiceTypeInUse]), a new
// schema that the stored attributes of live orders of the type do not
// satisfy (naming how many), and a change of lifecycle while orders are
// live (they are in the old lifecycle's states). ifMatch, when not nil, is
// the version the caller read: another gives [store.ErrStale]. A built-in
// type is [ErrServiceTypeReadOnly].
func (s *Service) ReplaceServiceType(ctx context.Context, p ServiceTypeParams, ifMatch *int64) (ServiceType, error) {
	st := p.serviceType()
	if s.cfg.ServiceTypes.IsBuiltin(st.ID) {
		return ServiceType{}, fmt.Errorf("service type %q: %w", st.ID, ErrServiceTypeReadOnly)
	}
	if err := checkServiceType(st); err != nil {
		return ServiceType{}, err
	}
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		cur, err := serviceTypeFromRow(s.q.ServiceTypeLock(ctx, tx, st.ID))
		if err != nil {
			return fmt.Errorf("service type %q: %w", st.ID, err)
		}
		if ifMatch != nil && *ifMatch != cur.Version {
			return store.ErrStale
		}
		if err := s.checkReferences(ctx, st, s.parentReader(ctx, tx)); err != nil {
			return err
		}
		if err := s.checkLiveOrders(ctx, tx, cur, st); err != nil {
			return err
		}
		cols, err := serviceTypeColumns(st)
		if err != nil {
			return err
		}
		n, err := s.q.ServiceTypeUpdate(ctx, tx, ServiceTypeUpdateParams{Schema: cols.Schema, Lifecycle: cols.Lifecycle,
			IdentityAttribute: cols.IdentityAttribute, ParentServiceType: cols.ParentServiceType,
			OnParentDelete: cols.OnParentDelete, RequiredAdapters: cols.RequiredAdapters, Runtime: cols.Runtime,
			UpdateTime: s.now(), ID: st.ID, Version: cur.Version})
		if err == nil && n == 0 {
			return store.ErrStale
		}
		return err
	})
	if err != nil {
		return ServiceType{}, err
	}
	s.log.InfoContext(ctx, "service type replaced", "service_type", st.ID, "lifecycle", st.Lifecycle)
	return s.ServiceType(ctx, st.ID)
}

// checkLiveOrders refuses a replacement that live orders of the type could
// not live with: a new lifecycle, or a schema their stored attribute sets
// break.
func (s *Service) checkLiveOrders(ctx context.Context, tx *store.Tx, cur, next ServiceType) error {
	live, err := s.cfg.Orders.LiveOfTypeTx(ctx, tx, cur.ID)
	if err != nil {
		return fmt.Errorf("count live orders of %q: %w", cur.ID, err)
	}
	if live == 0 {
		return nil
	}
	if next.Lifecycle != cur.Lifecycle {
		return &ServiceTypeInUseError{ServiceTypeID: cur.ID, LiveOrders: live,
			Why: fmt.Sprintf("its lifecycle cannot change from %q to %q while orders are in its states", cur.Lifecycle, next.Lifecycle)}
	}
	entry, err := newServiceTypeEntry(next)
	if err != nil {
		return err
	}
	sets, err := s.cfg.Orders.LiveAttributesTx(ctx, tx, cur.ID)
	if err != nil {
		return fmt.Errorf("read live orders of %q: %w", cur.ID, err)
	}
	var broken []string
	for _, id := range slices.Sorted(maps.Keys(sets)) {
		for _, set := range sets[id].Sets() {
			if entry.schema.Validate("spec", entry.envelopeFree(set)) != nil {
				broken = append(broken, id)
				break
			}
		}
	}
	if len(broken) > 0 {
		return &ServiceTypeInUseError{ServiceTypeID: cur.ID, LiveOrders: live, BrokenOrders: len(broken),
			Examples: broken[:min(len(broken), 5)],
			Why:      fmt.Sprintf("the new schema refuses the stored attributes of %d live order(s)", len(broken))}
	}
	return nil
}

// DeleteServiceType removes the stored service type with the id. It
// refuses with a [*ServiceTypeInUseError] ([ErrServiceTypeInUse]) while
// catalog items, live orders or child types use it. ifMatch is as in
// [Service.ReplaceServiceType]. A built-in type is [ErrServiceTypeReadOnly].
func (s *Service) DeleteServiceType(ctx context.Context, id string, ifMatch *int64) error {
	if s.cfg.ServiceTypes.IsBuiltin(id) {
		return fmt.Errorf("service type %q: %w", id, ErrServiceTypeReadOnly)
	}
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		cur, err := serviceTypeFromRow(s.q.ServiceTypeLock(ctx, tx, id))
		if err != nil {
			return fmt.Errorf("service type %q: %w", id, err)
		}
		if ifMatch != nil && *ifMatch != cur.Version {
			return store.ErrStale
		}
		inUse := &ServiceTypeInUseError{ServiceTypeID: id}
		items, err := s.q.CatalogItemCountByServiceType(ctx, tx, id)
		if err != nil {
			return err
		}
		inUse.CatalogItems = int(items)
		if inUse.LiveOrders, err = s.cfg.Orders.LiveOfTypeTx(ctx, tx, id); err != nil {
			return err
		}
		if inUse.ChildTypes, err = s.q.ServiceTypeIDsByParent(ctx, tx, id); err != nil {
			return err
		}
		if inUse.CatalogItems+inUse.LiveOrders+len(inUse.ChildTypes) > 0 {
			inUse.Why = "it is still used"
			return inUse
		}
		n, err := s.q.ServiceTypeDelete(ctx, tx, id, cur.Version)
		if err == nil && n == 0 {
			return store.ErrStale
		}
		return err
	})
	if err != nil {
		return err
	}
	s.log.InfoContext(ctx, "service type deleted", "service_type", id)
	return nil
}

// ServiceTypesUsingLifecycle lists the stored service types whose
// lifecycle is lifecycleID (the lifecycle domain asks before deleting one).
func (s *Service) ServiceTypesUsingLifecycle(ctx context.Context, lifecycleID string) ([]string, error) {
	var out []string
	for _, e := range s.cfg.ServiceTypes.builtins {
		if e.serviceType.Lifecycle == lifecycleID {
			out = append(out, e.serviceType.ID)
		}
	}
	stored, err := s.q.ServiceTypeIDsByLifecycle(ctx, s.cfg.DB, lifecycleID)
	if err != nil {
		return nil, err
	}
	out = append(out, stored...)
	slices.Sort(out)
	return out, nil
}

// parentReader reads the parent of a type in tx, for the cycle check.
func (s *Service) parentReader(ctx context.Context, tx *store.Tx) func(id string) (*string, error) {
	return func(id string) (*string, error) {
		e, err := s.cfg.ServiceTypes.entry(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		return e.serviceType.ParentServiceType, nil
	}
}

// serviceTypeColumns are the column values of st but its times.
func serviceTypeColumns(st ServiceType) (ServiceTypeInsertParams, error) {
	var compact bytes.Buffer
	err := json.Compact(&compact, st.Schema)
	if err != nil {
		return ServiceTypeInsertParams{}, invalid.New("schema", "must be a JSON document: %v", err)
	}
	// A nil runtime is stored as JSON null.
	return ServiceTypeInsertParams{ID: st.ID, Schema: compact.String(), Lifecycle: st.Lifecycle,
		IdentityAttribute: st.IdentityAttribute, ParentServiceType: st.ParentServiceType,
		OnParentDelete: st.OnParentDelete, RequiredAdapters: store.JSON(st.RequiredAdapters),
		Runtime: store.JSON(st.Runtime)}, nil
}
