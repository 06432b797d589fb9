package sentinel

import (
	"context"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/store"
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
	rows, err := s.cfg.DB.Query(ctx, s.q.Get("SentinelCandidates"), serviceType, after,
		now.Add(-s.cfg.Debounce), now.Add(-s.cfg.MaxAge), s.cfg.BatchSize)
	if err != nil {
		return nil, fmt.Errorf("sentinel: find candidates: %w", err)
	}
	defer rows.Close()
	out := make([]candidate, 0, s.cfg.BatchSize)
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.id, &c.project, &c.serviceType, &c.generation, &c.state, &c.status, &c.deletedAt,
			&c.updateTime, &c.marked, &c.lastGeneration, &c.publishedTime, &c.wasReady); err != nil {
			return nil, fmt.Errorf("sentinel: find candidates: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sentinel: find candidates: %w", err)
	}
	return out, nil
}

// reports returns the adapter reports of a batch, by order id.
func (s *Service) reports(ctx context.Context, batch []candidate) (map[string][]report, error) {
	ids := make([]string, len(batch))
	for i, c := range batch {
		ids[i] = c.id
	}
	rows, err := s.cfg.DB.Query(ctx, s.q.Get("SentinelReports"), store.Strings(ids))
	if err != nil {
		return nil, fmt.Errorf("sentinel: read adapter reports: %w", err)
	}
	defer rows.Close()
	out := map[string][]report{}
	for rows.Next() {
		var id string
		var r report
		var conds []byte
		if err := rows.Scan(&id, &r.adapter, &r.generation, &conds); err != nil {
			return nil, fmt.Errorf("sentinel: read adapter reports: %w", err)
		}
		if r.conditions, err = decodeConditions(conds); err != nil {
			return nil, fmt.Errorf("sentinel: adapter %s's report on %s: %w", r.adapter, id, err)
		}
		out[id] = append(out[id], r)
	}
	return out, rows.Err()
}
