package policy

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"sync"
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
	// Projects are the projects whose orders the provider may serve
	// ("*": every one); nil is every project too.
	Projects []string `json:"-"`
}

// ServesProject reports whether the provider may serve project's orders.
func (p ProviderInfo) ServesProject(project string) bool {
	return p.Projects == nil || slices.Contains(p.Projects, "*") || slices.Contains(p.Projects, project)
}

// ServingProject is the providers that may serve project's orders: the
// others are not candidates at all, neither for a policy's choice nor for
// PickProvider's.
func ServingProject(providers []ProviderInfo, project string) []ProviderInfo {
	out := make([]ProviderInfo, 0, len(providers))
	for _, p := range providers {
		if p.ServesProject(project) {
			out = append(out, p)
		}
	}
	return out
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
// matches every one of Patterns (RE2 regular expressions, searched as DCM
// does: "^aws" anchors, "east" matches anywhere) and of Globs (path.Match,
// whole name), its metadata has every Metadata key with the same value,
// and its metadata "environment" (DCM's agent environment) is in
// Environments (if not empty) and matches every EnvironmentPatterns. The
// zero value allows every provider.
type ProviderConstraints struct {
	AllowList           []string          `json:"allow_list,omitempty"`
	Patterns            []string          `json:"patterns,omitempty"`
	Globs               []string          `json:"globs,omitempty"`
	Metadata            map[string]string `json:"metadata,omitempty"`
	Environments        []string          `json:"environments,omitempty"`
	EnvironmentPatterns []string          `json:"environment_patterns,omitempty"`
}

// EnvironmentKey is the provider metadata key DCM's environment
// constraints match.
const EnvironmentKey = "environment"

// Allows reports whether p satisfies the constraints. A malformed pattern
// or glob allows nothing (the chain refuses them before they get here).
func (c ProviderConstraints) Allows(p ProviderInfo) bool {
	if len(c.AllowList) > 0 && !slices.Contains(c.AllowList, p.Name) {
		return false
	}
	if !matchAll(c.Patterns, p.Name) {
		return false
	}
	for _, g := range c.Globs {
		if ok, err := path.Match(g, p.Name); !ok || err != nil {
			return false
		}
	}
	for k, v := range c.Metadata {
		if got, ok := p.Metadata[k]; !ok || got != v {
			return false
		}
	}
	env, hasEnv := p.Metadata[EnvironmentKey]
	if len(c.Environments) > 0 && (!hasEnv || !slices.Contains(c.Environments, env)) {
		return false
	}
	return len(c.EnvironmentPatterns) == 0 || hasEnv && matchAll(c.EnvironmentPatterns, env)
}

// matchAll reports whether s matches every RE2 pattern.
func matchAll(patterns []string, s string) bool {
	for _, pat := range patterns {
		re, err := compileRE2(pat)
		if err != nil || !re.MatchString(s) {
			return false
		}
	}
	return true
}

// merge returns the intersection of c and more. conflict is set when the
// intersection is empty by construction: disjoint allow lists or
// environment lists, or two values required for one metadata key.
func (c ProviderConstraints) merge(more ProviderConstraints) (merged ProviderConstraints, conflict string) {
	merged = ProviderConstraints{
		Patterns:            appendNew(slices.Clone(c.Patterns), more.Patterns...),
		Globs:               appendNew(slices.Clone(c.Globs), more.Globs...),
		EnvironmentPatterns: appendNew(slices.Clone(c.EnvironmentPatterns), more.EnvironmentPatterns...),
		Metadata:            make(map[string]string, len(c.Metadata)+len(more.Metadata)),
	}
	var ok bool
	if merged.AllowList, ok = intersect(c.AllowList, more.AllowList); !ok {
		return c, fmt.Sprintf("allow_list %v has no provider in common with the accumulated %v", more.AllowList, c.AllowList)
	}
	if merged.Environments, ok = intersect(c.Environments, more.Environments); !ok {
		return c, fmt.Sprintf("environment_constraints %v have no environment in common with the accumulated %v",
			more.Environments, c.Environments)
	}
	maps.Copy(merged.Metadata, c.Metadata)
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

// intersect intersects two allow lists, where an empty list allows all.
// ok is false when both restrict and share nothing.
func intersect(have, more []string) (out []string, ok bool) {
	switch {
	case len(more) == 0:
		return slices.Clone(have), true
	case len(have) == 0:
		return slices.Clone(more), true
	}
	out = slices.DeleteFunc(slices.Clone(have), func(n string) bool { return !slices.Contains(more, n) })
	return out, len(out) > 0
}

func appendNew(list []string, more ...string) []string {
	for _, s := range more {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// PickParams is what [PickProvider] chooses from.
type PickParams struct {
	Providers   []ProviderInfo
	ServiceType string
	Constraints ProviderConstraints
	// Exclude names providers that must not be chosen (exclude_providers).
	Exclude []string
	// Project, when set, is the order's: only providers serving it count.
	Project string
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
			p.Project != "" && !c.ServesProject(p.Project) || !p.Constraints.Allows(*c) {
			continue
		}
		if limit, ok := c.Capacity[CapacityInstances]; ok && int64(c.LiveInstances) >= limit {
			continue
		}
		if best == nil || cmp.Or(cmp.Compare(c.LiveInstances, best.LiveInstances), cmp.Compare(c.Name, best.Name)) < 0 {
			best = c
		}
	}
	if best == nil && p.Project != "" {
		return ProviderInfo{}, fmt.Errorf("%w: none healthy, serving %q to project %q, allowed by the policies and "+
			"with capacity left", ErrNoProvider, p.ServiceType, p.Project)
	}
	if best == nil {
		return ProviderInfo{}, fmt.Errorf("%w: none healthy, serving %q, allowed by the policies and with capacity left",
			ErrNoProvider, p.ServiceType)
	}
	return *best, nil
}

// pathMatch checks that pattern is a well-formed path.Match glob.
func pathMatch(pattern string) (bool, error) { return path.Match(pattern, "") }

// maxCachedPatterns bounds the compiled pattern cache; past it the cache
// starts over.
const maxCachedPatterns = 1024

var patternCache = struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}{m: map[string]*regexp.Regexp{}}

// compileRE2 compiles a provider pattern, from the cache when it is there:
// policies answer the same few patterns on every request, and placement
// checks them again for every candidate provider.
func compileRE2(pattern string) (*regexp.Regexp, error) {
	patternCache.Lock()
	re := patternCache.m[pattern]
	patternCache.Unlock()
	if re != nil {
		return re, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	patternCache.Lock()
	if len(patternCache.m) >= maxCachedPatterns {
		clear(patternCache.m)
	}
	patternCache.m[pattern] = re
	patternCache.Unlock()
	return re, nil
}
