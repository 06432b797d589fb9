package sentinel

import (
	"context"
	"fmt"
	"time"
)

// candidate is an order the candidate query found, with the sentinel's mark.
type candidate struct {
	id, project, serviceType, state, status string
	generation                              int64
	deletedAt                               *time.Time
	updateTime                              time.Time
	marked                                  bool
	lastGeneration                          int64
	publishedTime                           *time.Time
	wasReady                                bool
}

func (c candidate) deleting() bool { return c.deletedAt != nil }

// candidates returns the next batch of candidates of a service type after
// the id after.
func (s *Service) candidates(ctx context.Context, serviceType, after string, now time.Time) ([]candidate, error) {
	rows, err := s.q.SentinelCandidates(ctx, s.cfg.DB, SentinelCandidatesParams{ServiceType: serviceType, AfterID: after,
		DebounceCutoff: now.Add(-s.cfg.Debounce), MaxAgeCutoff: now.Add(-s.cfg.MaxAge), Limit: int64(s.cfg.BatchSize)})
	if err != nil {
		return nil, fmt.Errorf("sentinel: find candidates: %w", err)
	}
	out := make([]candidate, 0, len(rows))
	for _, r := range rows {
		out = append(out, candidate{id: r.ID, project: r.Project, serviceType: r.ServiceType, generation: r.Generation,
			state: r.State, status: r.Status, deletedAt: r.DeletedAt, updateTime: r.UpdateTime, marked: r.Marked,
			lastGeneration: r.LastGeneration, publishedTime: r.PublishedTime, wasReady: r.WasReady})
	}
	return out, nil
}

// reports returns the adapter reports of a batch, by order id.
func (s *Service) reports(ctx context.Context, batch []candidate) (map[string][]report, error) {
	ids := make([]string, len(batch))
	for i, c := range batch {
		ids[i] = c.id
	}
	rows, err := s.q.SentinelReports(ctx, s.cfg.DB, ids)
	if err != nil {
		return nil, fmt.Errorf("sentinel: read adapter reports: %w", err)
	}
	out := map[string][]report{}
	for _, row := range rows {
		r := report{adapter: row.Adapter, generation: row.ObservedGeneration}
		if r.conditions, err = decodeConditions(row.Conditions); err != nil {
			return nil, fmt.Errorf("sentinel: adapter %s's report on %s: %w", r.adapter, row.OrderID, err)
		}
		out[row.OrderID] = append(out[row.OrderID], r)
	}
	return out, nil
}
