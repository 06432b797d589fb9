package sprm

import (
	"context"
	"fmt"

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
	rows, err := s.cfg.DB.Query(ctx, s.q.Get("InstanceCountLivePerProvider"))
	if err != nil {
		return nil, fmt.Errorf("count live instances: %w", err)
	}
	type count struct {
		name string
		n    int
	}
	cs, err := store.Collect(rows, func(r scanner) (count, error) {
		var c count
		return c, r.Scan(&c.name, &c.n)
	})
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		counts[c.name] = c.n
	}
	var out []ProviderLoad
	page := store.PageRequest{Size: store.MaxPageSize}
	for {
		ps, err := s.Providers(ctx, ListProvidersParams{Page: page})
		if err != nil {
			return nil, err
		}
		for _, p := range ps.Results {
			out = append(out, ProviderLoad{Provider: p, LiveInstances: counts[p.Name]})
		}
		if ps.NextPageToken == "" {
			return out, nil
		}
		if page.After, err = store.DecodeCursor(ps.NextPageToken); err != nil {
			return nil, err
		}
	}
}
