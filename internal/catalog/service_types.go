package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/schema"
)

// ServiceTypes is the registry of service types, each with its schema
// compiled once. It holds the built-in types of API.md; stored types join
// it in a later issue. Build it with [NewServiceTypes]. It is safe for
// concurrent use by multiple goroutines.
type ServiceTypes struct {
	mu sync.RWMutex
	// types maps id → entry. An entry is never changed once stored, so it may
	// be used after the lock is released.
	types map[string]*serviceTypeEntry
}

type serviceTypeEntry struct {
	serviceType ServiceType
	schema      *schema.Schema
}

// NewServiceTypes returns a registry holding the built-in service types
// (vm, container, database, cluster) with their schemas compiled. An error
// means a built-in schema does not compile, which is a bug in this package.
func NewServiceTypes() (*ServiceTypes, error) {
	builtins, err := builtinServiceTypes()
	if err != nil {
		return nil, err
	}
	r := &ServiceTypes{types: make(map[string]*serviceTypeEntry, len(builtins))}
	for _, st := range builtins {
		if err := r.add(st); err != nil {
			return nil, fmt.Errorf("built-in service type %q: %w", st.ID, err)
		}
	}
	return r, nil
}

// Get returns the service type with the id, or an error wrapping
// [ErrServiceTypeNotFound].
func (r *ServiceTypes) Get(id string) (ServiceType, error) {
	e, err := r.entry(id)
	if err != nil {
		return ServiceType{}, err
	}
	return e.serviceType.clone(), nil
}

// List returns every service type, sorted by id.
func (r *ServiceTypes) List() []ServiceType {
	r.mu.RLock()
	out := make([]ServiceType, 0, len(r.types))
	for _, e := range r.types {
		out = append(out, e.serviceType.clone())
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b ServiceType) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// ValidateSpec checks spec, the body's "spec" member, against the schema of
// serviceType. It returns nil when the spec is valid; an error wrapping
// [ErrServiceTypeNotFound] when no type has that id; or an [*invalid.Error]
// with one field per failing location, as a dotted path from the request
// body ("spec.vcpu.count", "spec.storage.disks[0].name"; a missing property
// is named itself, "spec.guest_os": "is required"), sorted by field. An
// empty serviceType is a missing "spec.service_type".
//
// Defaults in the schema are not applied, and x-modifier is not enforced:
// both belong to the order flow. spec is not modified.
func (r *ServiceTypes) ValidateSpec(serviceType string, spec map[string]any) error {
	if serviceType == "" {
		return invalid.New("spec.service_type", "is required")
	}
	e, err := r.entry(serviceType)
	if err != nil {
		return err
	}
	return e.schema.Validate("spec", spec)
}

// validateFragment checks a spec that may still lack parts, such as a
// catalog item's defaults, against serviceType's schema: like ValidateSpec,
// but a missing property (or too few items) is not an error, and fields are
// named under root ("defaults.vcpu.count").
func (r *ServiceTypes) validateFragment(serviceType, root string, spec map[string]any) error {
	e, err := r.entry(serviceType)
	if err != nil {
		return err
	}
	return e.schema.ValidateFragment(root, spec)
}

func (r *ServiceTypes) entry(id string) (*serviceTypeEntry, error) {
	r.mu.RLock()
	e, ok := r.types[id]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("service type %q: %w", id, ErrServiceTypeNotFound)
	}
	return e, nil
}

// add compiles st's schema and stores st, replacing a type with the same id.
func (r *ServiceTypes) add(st ServiceType) error {
	compiled, err := schema.Compile(st.Schema)
	if err != nil {
		return err
	}
	e := &serviceTypeEntry{serviceType: st.clone(), schema: compiled}
	r.mu.Lock()
	r.types[st.ID] = e
	r.mu.Unlock()
	return nil
}
