package catalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/schema"
	"github.com/stewardhq/steward/internal/store"
)

// ServiceTypes is the registry of service types, each with its schema
// compiled once: the built-in types of API.md, and the types defined
// through the API (stored in the service_types table) when it has a store.
// Build it with [NewServiceTypes]. It is safe for concurrent use by
// multiple goroutines.
//
// A stored type is read from the store on every lookup (one primary-key
// read) and its compiled schema is reused while the row's version is
// unchanged, so a type changed on one replica is in force on every replica
// at once, with no refresh interval.
type ServiceTypes struct {
	db       *store.DB
	q        *queries
	builtins map[string]*serviceTypeEntry

	mu sync.Mutex
	// compiled caches stored types' entries by id; an entry is never
	// changed once stored, so it may be used after the lock is released.
	compiled map[string]*serviceTypeEntry
}

type serviceTypeEntry struct {
	serviceType ServiceType
	schema      *schema.Schema
}

// builtinTime is the create and update time of the built-in types: the day
// they shipped.
var builtinTime = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// NewServiceTypes returns a registry holding the built-in service types
// (vm, container, database, cluster) with their schemas compiled, and the
// stored ones in db (nil: built-ins only). An error means a built-in schema
// does not compile, which is a bug in this package.
func NewServiceTypes(db *store.DB) (*ServiceTypes, error) {
	builtins, err := builtinServiceTypes()
	if err != nil {
		return nil, err
	}
	r := &ServiceTypes{db: db, builtins: make(map[string]*serviceTypeEntry, len(builtins)),
		compiled: make(map[string]*serviceTypeEntry)}
	if db != nil {
		r.q = newQueries(db.Engine())
	}
	for _, st := range builtins {
		st.Builtin, st.Version, st.CreateTime, st.UpdateTime = true, 1, builtinTime, builtinTime
		e, err := newServiceTypeEntry(st)
		if err != nil {
			return nil, fmt.Errorf("built-in service type %q: %w", st.ID, err)
		}
		r.builtins[st.ID] = e
	}
	return r, nil
}

// IsBuiltin reports whether id names a built-in service type.
func (r *ServiceTypes) IsBuiltin(id string) bool {
	_, ok := r.builtins[id]
	return ok
}

// Get returns the service type with the id, or an error wrapping
// [ErrServiceTypeNotFound].
func (r *ServiceTypes) Get(ctx context.Context, id string) (ServiceType, error) {
	e, err := r.entry(ctx, r.db, id)
	if err != nil {
		return ServiceType{}, err
	}
	return e.serviceType.clone(), nil
}

// OrderType is what the reads of orders need of the service type with the
// id (order.Config.ServiceType): its identity attribute and runtime kind.
func (r *ServiceTypes) OrderType(ctx context.Context, id string) (order.ServiceType, error) {
	e, err := r.entry(ctx, r.db, id)
	if err != nil {
		return order.ServiceType{}, err
	}
	var t order.ServiceType
	if a := e.serviceType.IdentityAttribute; a != nil {
		t.IdentityAttribute = *a
	}
	if rt := e.serviceType.Runtime; rt != nil {
		t.RuntimeKind = rt.Kind
	}
	return t, nil
}

// List returns a page of the service types, built-in and stored, sorted by
// id: the types with an id after after, at most size of them plus one (so
// the caller can tell whether there is a next page).
func (r *ServiceTypes) List(ctx context.Context, after string, size int) ([]ServiceType, error) {
	var out []ServiceType
	for _, id := range slices.Sorted(maps.Keys(r.builtins)) {
		if id > after {
			out = append(out, r.builtins[id].serviceType.clone())
		}
	}
	if r.db != nil {
		rows, err := r.q.ServiceTypeList(ctx, r.db, after, int64(size+1))
		if err != nil {
			return nil, fmt.Errorf("list service types: %w", err)
		}
		for _, row := range rows {
			st, err := serviceTypeFromRow(row, nil)
			if err != nil {
				return nil, fmt.Errorf("list service types: %w", err)
			}
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b ServiceType) int { return cmp.Compare(a.ID, b.ID) })
	return out[:min(len(out), size+1)], nil
}

// ValidateSpec checks spec, the body's "spec" member, against the schema of
// serviceType. It returns nil when the spec is valid; an error wrapping
// [ErrServiceTypeNotFound] when no type has that id; or an [*invalid.Error]
// with one field per failing location, as a dotted path from the request
// body ("spec.vcpu.count", "spec.storage.disks[0].name"; a missing property
// is named itself, "spec.guest_os": "is required"), sorted by field. An
// empty serviceType is a missing "spec.service_type".
//
// A stored type's schema need not declare service_type: the spec's own
// service_type is its envelope, checked to equal serviceType, and left out
// of what the schema sees unless the schema declares it (the built-ins pin
// it with const).
//
// Defaults in the schema are not applied, and x-modifier is not enforced:
// both belong to the order flow. spec is not modified.
func (r *ServiceTypes) ValidateSpec(ctx context.Context, serviceType string, spec map[string]any) error {
	if serviceType == "" {
		return invalid.New("spec.service_type", "is required")
	}
	e, err := r.entry(ctx, r.db, serviceType)
	if err != nil {
		return err
	}
	if got, ok := spec["service_type"]; ok && got != serviceType {
		return invalid.New("spec.service_type", "must be %q", serviceType)
	}
	return e.schema.Validate("spec", e.envelopeFree(spec))
}

// validateFragment checks a spec that may still lack parts, such as a
// catalog item's defaults, against serviceType's schema: like ValidateSpec,
// but a missing property (or too few items) is not an error, and fields are
// named under root ("defaults.vcpu.count").
func (r *ServiceTypes) validateFragment(ctx context.Context, serviceType, root string, spec map[string]any) error {
	e, err := r.entry(ctx, r.db, serviceType)
	if err != nil {
		return err
	}
	return e.schema.ValidateFragment(root, e.envelopeFree(spec))
}

// entry returns the entry of a built-in type, or reads the stored type
// through q (a transaction or the database) and returns its cached entry,
// compiling it when its version is new.
func (r *ServiceTypes) entry(ctx context.Context, q store.Querier, id string) (*serviceTypeEntry, error) {
	if e, ok := r.builtins[id]; ok {
		return e, nil
	}
	if r.db == nil {
		return nil, fmt.Errorf("service type %q: %w", id, ErrServiceTypeNotFound)
	}
	st, err := serviceTypeFromRow(r.q.ServiceTypeGet(ctx, q, id))
	if errors.Is(err, ErrServiceTypeNotFound) {
		return nil, fmt.Errorf("service type %q: %w", id, ErrServiceTypeNotFound)
	}
	if err != nil {
		return nil, err
	}
	return r.cached(st)
}

// cached returns the cached entry of a stored type at st's version,
// compiling and caching it when the cache holds another version.
func (r *ServiceTypes) cached(st ServiceType) (*serviceTypeEntry, error) {
	r.mu.Lock()
	e, ok := r.compiled[st.ID]
	r.mu.Unlock()
	if ok && e.serviceType.Version == st.Version && e.serviceType.UpdateTime.Equal(st.UpdateTime) {
		return e, nil
	}
	e, err := newServiceTypeEntry(st)
	if err != nil {
		// A stored schema compiled when it was stored; failing now is a
		// bug or a store edited by hand, not the caller's fault.
		return nil, fmt.Errorf("compile stored service type %q: %v", st.ID, err)
	}
	r.mu.Lock()
	r.compiled[st.ID] = e
	r.mu.Unlock()
	return e, nil
}

func newServiceTypeEntry(st ServiceType) (*serviceTypeEntry, error) {
	compiled, err := schema.Compile(st.Schema)
	if err != nil {
		return nil, err
	}
	return &serviceTypeEntry{serviceType: st.clone(), schema: compiled}, nil
}

// envelopeFree returns spec without its service_type member when the
// type's schema does not declare that property.
func (e *serviceTypeEntry) envelopeFree(spec map[string]any) map[string]any {
	if _, ok := spec["service_type"]; !ok || e.serviceType.Builtin || e.schema.DeclaresProperty("service_type") {
		return spec
	}
	out := maps.Clone(spec)
	delete(out, "service_type")
	return out
}
