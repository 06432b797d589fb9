package sprm

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/store"
)

// ProviderLoad is a provider as placement sees it: its registration, health
// and how many live instances it holds (for capacity and spreading).
type ProviderLoad struct {
	Provider
	LiveInstances int
}

// ProviderLoads lists every registered provider with its live instance
// count, for the policy chain's available_providers and the default
// placement rule.
func (s *Service) ProviderLoads(ctx context.Context) ([]ProviderLoad, error) {
	counts := map[string]int{}
	cs, err := s.q.InstanceCountLivePerProvider(ctx, s.cfg.DB)
	if err != nil {
		return nil, fmt.Errorf("count live instances: %w", err)
	}
	for _, c := range cs {
		counts[c.ProviderName] = int(c.Live)
	}
	providers, err := s.registry.providers(ctx, s.allProviders)
	if err != nil {
		return nil, err
	}
	out := make([]ProviderLoad, len(providers))
	for i, p := range providers {
		out[i] = ProviderLoad{Provider: p, LiveInstances: counts[p.Name]}
	}
	return out, nil
}

// allProviders reads every registered provider.
func (s *Service) allProviders(ctx context.Context) ([]Provider, error) {
	var out []Provider
	page := store.PageRequest{Size: store.MaxPageSize}
	for {
		ps, err := s.Providers(ctx, ListProvidersParams{Page: page})
		if err != nil {
			return nil, err
		}
		out = append(out, ps.Results...)
		if ps.NextPageToken == "" {
			return out, nil
		}
		if page.After, err = store.DecodeCursor(ps.NextPageToken); err != nil {
			return nil, err
		}
	}
}

// providerSnapshotTTL is how long placement reuses the provider registry it
// read. Reading and decoding the registry on every order was 5% of the
// order flow's CPU. A change made through this process invalidates the
// snapshot at once; one made by another replica is seen within the TTL.
// Placement only proposes a provider: the SPRM create checks the
// provider's registration and health again, under its row lock.
const providerSnapshotTTL = time.Second

// registrySnapshot is the provider registry as last read, shared by
// concurrent orders (read-only: callers must not modify it).
type registrySnapshot struct {
	mu   sync.Mutex
	list []Provider
	read time.Time
	gen  uint64 // bumped by invalidate; a read that raced one is not kept
}

func (r *registrySnapshot) invalidate() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list, r.gen = nil, r.gen+1
}

func (r *registrySnapshot) providers(ctx context.Context, read func(context.Context) ([]Provider, error)) ([]Provider, error) {
	r.mu.Lock()
	list, fresh, gen := r.list, r.list != nil && time.Since(r.read) < providerSnapshotTTL, r.gen
	r.mu.Unlock()
	if fresh {
		return list, nil
	}
	start := time.Now()
	list, err := read(ctx)
	if err != nil {
		return nil, err
	}
	if list == nil {
		list = []Provider{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gen == gen {
		r.list, r.read = list, start
	}
	return list, nil
}
