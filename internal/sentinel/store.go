package sentinel

import (
	"context"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/order"
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
	// gone is set for what a pass found but has no decision to make: a
	// marked order removed since its mark was read, a new order marked
	// since (the due pass's).
	gone bool
}

// summary sets what c says of the order.
func (c *candidate) summary(o order.Summary) {
	c.id, c.project, c.serviceType, c.generation = o.ID, o.Project, o.ServiceType, o.Generation
	c.state, c.status, c.deletedAt, c.updateTime, c.terminal = o.State, o.Status, o.DeletedAt, o.UpdateTime, o.Terminal
}

func (c candidate) deleting() bool { return c.deletedAt != nil }

// due returns the next batch of marked orders due by now, after (afterTime,
// afterID) in due order.
func (s *Service) due(ctx context.Context, now, afterTime time.Time, afterID string) ([]candidate, error) {
	marks, err := s.q.SentinelDue(ctx, s.cfg.DB, SentinelDueParams{Now: now, AfterTime: afterTime, AfterID: afterID,
		Limit: int64(s.cfg.BatchSize)})
	if err != nil {
		return nil, fmt.Errorf("sentinel: find due orders: %w", err)
	}
	ids := make([]string, len(marks))
	for i, m := range marks {
		ids[i] = m.OrderID
	}
	orders, err := s.cfg.Orders.Summaries(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("sentinel: read due orders: %w", err)
	}
	byID := make(map[string]order.Summary, len(orders))
	for _, o := range orders {
		byID[o.ID] = o
	}
	out := make([]candidate, 0, len(marks))
	for _, m := range marks {
		c := candidate{key: *m.DueTime, id: m.OrderID, marked: true, lastGeneration: m.LastGeneration,
			publishedTime: m.PublishedTime, wasReady: m.WasReady}
		if o, ok := byID[m.OrderID]; ok {
			c.summary(o)
		} else {
			c.gone = true // removed since: its mark went with it
		}
		out = append(out, c)
	}
	return out, nil
}

// unmarked returns the next batch of orders of types created after
// (afterTime, afterID); those the sentinel has a mark of by now are the
// due pass's.
func (s *Service) unmarked(ctx context.Context, types []string, afterTime time.Time, afterID string) ([]candidate, error) {
	orders, err := s.cfg.Orders.CreatedAfter(ctx, types, afterTime, afterID, s.cfg.BatchSize)
	if err != nil {
		return nil, fmt.Errorf("sentinel: find new orders: %w", err)
	}
	ids := make([]string, len(orders))
	for i, o := range orders {
		ids[i] = o.ID
	}
	marked, err := s.q.SentinelMarked(ctx, s.cfg.DB, ids)
	if err != nil {
		return nil, fmt.Errorf("sentinel: find new orders' marks: %w", err)
	}
	has := make(map[string]bool, len(marked))
	for _, id := range marked {
		has[id] = true
	}
	out := make([]candidate, len(orders))
	for i, o := range orders {
		out[i] = candidate{key: o.CreateTime, gone: has[o.ID]}
		out[i].summary(o)
	}
	return out, nil
}

// reports returns the adapter reports of a batch, by order id.
func (s *Service) reports(ctx context.Context, batch []candidate) (map[string][]report, error) {
	ids := make([]string, len(batch))
	for i, c := range batch {
		ids[i] = c.id
	}
	byOrder, err := s.cfg.Reports.OfOrders(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("sentinel: %w", err)
	}
	out := make(map[string][]report, len(byOrder))
	for id, rs := range byOrder {
		for _, r := range rs {
			conditions := make(map[string]string, len(r.Conditions))
			for _, c := range r.Conditions {
				conditions[c.Type] = c.Status
			}
			out[id] = append(out[id], report{adapter: r.Adapter, generation: r.ObservedGeneration, conditions: conditions})
		}
	}
	return out, nil
}
