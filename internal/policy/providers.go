package policy

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
)

// ProviderHealthy is the provider status PickProvider accepts (sprm's
// "healthy"; "degraded" and "unavailable" are passed over).
const ProviderHealthy = "healthy"

// CapacityInstances is the capacity key that bounds a provider's live
// instances for [PickProvider].
const CapacityInstances = "instances"

// ProviderInfo is a registered provider as policies see it.
type ProviderInfo struct {
	Name         string            `json:"name"`
	ServiceTypes []string          `json:"service_types"`
	Metadata     map[string]string `json:"metadata"`
	// Status is healthy, degraded or unavailable.
	Status string `json:"status"`
	// Capacity is the provider's declared capacity; Capacity["instances"],
	// when set, bounds LiveInstances.
	Capacity map[string]int64 `json:"-"`
	// LiveInstances counts the instances the provider holds now.
	LiveInstances int `json:"-"`
}

// Serves reports whether the provider offers serviceType.
func (p ProviderInfo) Serves(serviceType string) bool {
	return slices.Contains(p.ServiceTypes, serviceType)
}

// ProviderSourceFunc adapts a function to the Config.Providers source.
type ProviderSourceFunc func(ctx context.Context) ([]ProviderInfo, error)

// AvailableProviders calls f.
func (f ProviderSourceFunc) AvailableProviders(ctx context.Context) ([]ProviderInfo, error) {
	return f(ctx)
}

// ProviderConstraints restrict which providers may serve a request. A
// provider satisfies them when it is in AllowList (if not empty), its name
// matches every one of Patterns (path.Match globs), and its metadata has
// every Metadata key with the same value. The zero value allows every
// provider.
type ProviderConstraints struct {
	AllowList []string          `json:"allow_list,omitempty"`
	Patterns  []string          `json:"patterns,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

// Allows reports whether p satisfies the constraints. A malformed pattern
// allows nothing (the chain refuses such patterns before they get here).
func (c ProviderConstraints) Allows(p ProviderInfo) bool {
	if len(c.AllowList) > 0 && !slices.Contains(c.AllowList, p.Name) {
		return false
	}
	for _, pat := range c.Patterns {
		if ok, err := path.Match(pat, p.Name); !ok || err != nil {
			return false
		}
	}
	for k, v := range c.Metadata {
		if got, ok := p.Metadata[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// merge returns the intersection of c and more. conflict is set when the
// intersection is empty by construction: disjoint allow lists, or two values
// required for one metadata key.
func (c ProviderConstraints) merge(more ProviderConstraints) (merged ProviderConstraints, conflict string) {
	merged = ProviderConstraints{
		AllowList: slices.Clone(c.AllowList),
		Patterns:  slices.Clone(c.Patterns),
		Metadata:  make(map[string]string, len(c.Metadata)+len(more.Metadata)),
	}
	switch {
	case len(more.AllowList) == 0:
	case len(merged.AllowList) == 0:
		merged.AllowList = slices.Clone(more.AllowList)
	default:
		merged.AllowList = slices.DeleteFunc(merged.AllowList, func(n string) bool { return !slices.Contains(more.AllowList, n) })
		if len(merged.AllowList) == 0 {
			return c, fmt.Sprintf("allow_list %v has no provider in common with the accumulated %v", more.AllowList, c.AllowList)
		}
	}
	for _, p := range more.Patterns {
		if !slices.Contains(merged.Patterns, p) {
			merged.Patterns = append(merged.Patterns, p)
		}
	}
	for k, v := range c.Metadata {
		merged.Metadata[k] = v
	}
	for k, v := range more.Metadata {
		if old, ok := merged.Metadata[k]; ok && old != v {
			return c, fmt.Sprintf("metadata %s=%q contradicts the accumulated %s=%q", k, v, k, old)
		}
		merged.Metadata[k] = v
	}
	if len(merged.Metadata) == 0 {
		merged.Metadata = nil
	}
	return merged, ""
}

// PickParams is what [PickProvider] chooses from.
type PickParams struct {
	Providers   []ProviderInfo
	ServiceType string
	Constraints ProviderConstraints
	// Exclude names providers that must not be chosen (exclude_providers).
	Exclude []string
}

// PickProvider is placement's default rule when no policy selected a
// provider (API.md, Policies): among the providers that are healthy, serve
// the service type, are not excluded, satisfy the provider constraints and
// have capacity left (Capacity["instances"], when set, above
// LiveInstances), it picks the one with the fewest live instances, then
// the first by name. It returns ErrNoProvider when none fits.
func PickProvider(p PickParams) (ProviderInfo, error) {
	var best *ProviderInfo
	for i := range p.Providers {
		c := &p.Providers[i]
		if c.Status != ProviderHealthy || !c.Serves(p.ServiceType) || slices.Contains(p.Exclude, c.Name) ||
			!p.Constraints.Allows(*c) {
			continue
		}
		if limit, ok := c.Capacity[CapacityInstances]; ok && int64(c.LiveInstances) >= limit {
			continue
		}
		if best == nil || cmp.Or(cmp.Compare(c.LiveInstances, best.LiveInstances), cmp.Compare(c.Name, best.Name)) < 0 {
			best = c
		}
	}
	if best == nil {
		return ProviderInfo{}, fmt.Errorf("%w: none healthy, serving %q, allowed by the policies and with capacity left",
			ErrNoProvider, p.ServiceType)
	}
	return *best, nil
}

// pathMatch checks that pattern is a well-formed path.Match glob.
func pathMatch(pattern string) (bool, error) { return path.Match(pattern, "") }
