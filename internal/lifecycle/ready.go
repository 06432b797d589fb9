package lifecycle

import (
	"context"

	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/status"
)

// conditionsView returns how a view derives an order's conditions (a list's
// orders share it: it reads each lifecycle and service type once): Ready
// ([status.Ready], then [status.AdaptersReady]) and Healthy
// ([status.Healthy]).
//
// Adapter reports are read here, when an order is shown, rather than
// folded into the order when a report arrives: so Ready follows a
// generation bump and a change of the type's required adapters at once,
// with nothing to recompute. They are read only for an order that is
// Ready but for them and whose service type requires adapters, so orders
// of types without required adapters (every built-in) cost no read.
func (s *Service) conditionsView(ctx context.Context) func(o Order) []Condition {
	defs := map[string]*statemachine.Definition{}
	required := map[string][]string{}
	runtimes := map[string]bool{}
	return func(o Order) []Condition {
		def, ok := defs[o.Lifecycle]
		if !ok {
			if d, err := s.definition(ctx, s.cfg.DB, o.Lifecycle); err == nil {
				def = &d
			}
			defs[o.Lifecycle] = def
		}
		var st statemachine.State
		if def != nil {
			st, _ = def.State(o.State)
		}
		in := statusOrder(&o, st)
		ready := status.Ready(in, s.now(), s.cfg.DeletionStuckAfter)
		if ready.Status == status.True && s.cfg.Adapters != nil {
			adapters, ok := required[o.ServiceType]
			if !ok {
				adapters, _ = s.cfg.Catalog.RequiredAdapters(ctx, o.ServiceType)
				required[o.ServiceType] = adapters
			}
			if len(adapters) > 0 {
				reports, err := s.cfg.Adapters.All(ctx, o.ID)
				ready = status.AdaptersReady(ready, in, status.Adapters{Required: adapters,
					Reports: statusReports(reports), ReadErr: err})
			}
		}
		cs := []Condition{ready}
		if h, ok := status.Healthy(in, s.runtime(ctx, o, runtimes)); ok {
			cs = append(cs, h)
		}
		if o.synced != nil {
			if c, ok := status.Synced(in, &status.Sync{InSync: o.synced.InSync, Differences: o.synced.Differences,
				ObservedTime: o.synced.ObservedTime}); ok {
				cs = append(cs, c)
			}
		}
		if o.copyingTo != nil {
			if c, ok := status.CopyingData(in, *o.copyingTo); ok {
				cs = append(cs, c)
			}
		}
		return cs
	}
}
