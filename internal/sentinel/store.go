package sentinel

import (
	"context"
	"fmt"
	"time"
)

// candidate is an order a pass found, with the sentinel's mark.
type candidate struct {
	id, project, serviceType, state, status string
	generation                              int64
	deletedAt                               *time.Time
	updateTime                              time.Time
	marked                                  bool
	lastGeneration                          int64
	publishedTime                           *time.Time
	wasReady                                bool
	terminal                                bool
	// key is where the pass that found it goes on from: the mark's due
	// time, or the order's create time for a new order.
	key time.Time
}

func (c candidate) deleting() bool { return c.deletedAt != nil }

// due returns the next batch of marked orders due by now, after (afterTime,
// afterID) in due order.
func (s *Service) due(ctx context.Context, now, afterTime time.Time, afterID string) ([]candidate, error) {
	rows, err := s.q.SentinelDue(ctx, s.cfg.DB, SentinelDueParams{Now: now, AfterTime: afterTime, AfterID: afterID,
		Limit: int64(s.cfg.BatchSize)})
	if err != nil {
		return nil, fmt.Errorf("sentinel: find due orders: %w", err)
	}
	out := make([]candidate, 0, len(rows))
	for _, r := range rows {
		out = append(out, candidate{id: r.ID, project: r.Project, serviceType: r.ServiceType, generation: r.Generation,
			state: r.State, status: r.Status, deletedAt: r.DeletedAt, updateTime: r.UpdateTime, marked: r.Marked,
			lastGeneration: r.LastGeneration, publishedTime: r.PublishedTime, wasReady: r.WasReady,
			terminal: r.Terminal, key: *r.DueTime})
	}
	return out, nil
}

// unmarked returns the next batch of orders of types without a mark,
// created after (afterTime, afterID).
func (s *Service) unmarked(ctx context.Context, types []string, afterTime time.Time, afterID string) ([]candidate, error) {
	rows, err := s.q.SentinelNew(ctx, s.cfg.DB, SentinelNewParams{ServiceTypes: types, AfterTime: afterTime,
		AfterID: afterID, Limit: int64(s.cfg.BatchSize)})
	if err != nil {
		return nil, fmt.Errorf("sentinel: find new orders: %w", err)
	}
	out := make([]candidate, 0, len(rows))
	for _, r := range rows {
		out = append(out, candidate{id: r.ID, project: r.Project, serviceType: r.ServiceType, generation: r.Generation,
			state: r.State, status: r.Status, deletedAt: r.DeletedAt, updateTime: r.UpdateTime, terminal: r.Terminal,
			key: r.DueTime})
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
