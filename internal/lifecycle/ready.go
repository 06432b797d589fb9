package lifecycle

import (
	"context"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/internal/adapterstatus"
	"github.com/stewardhq/steward/internal/statemachine"
)

// Reasons of the Ready condition this file decides.
const (
	reasonDeleting         = "Deleting"
	reasonDeletionStuck    = "DeletionStuck"
	reasonAdaptersNotReady = "AdaptersNotReady"
)

// conditionsView returns how a view derives an order's conditions (a list's
// orders share it: it reads each lifecycle and service type once):
//   - Ready as [Order.Conditions] decides from the state and the
//     provider's status;
//   - a Running order whose service type has required adapters is Ready
//     only when each of them reported Available=True at the order's
//     current generation; else Ready=False, reason AdaptersNotReady, and
//     the message names each adapter that holds it back and why;
//   - a deletion waiting at its gate longer than the stuck threshold says
//     DeletionStuck.
//
// Adapter reports are read here, when an order is shown, rather than
// folded into the order when a report arrives: so Ready follows a
// generation bump and a change of the type's required adapters at once,
// with nothing to recompute, and orders of types without required
// adapters (every built-in) cost no read.
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
		cs := o.Conditions(st)
		ready := &cs[0]
		switch {
		case ready.Reason == reasonDeleting && o.DeletedAt != nil && s.now().Sub(*o.DeletedAt) > s.cfg.DeletionStuckAfter:
			ready.Reason = reasonDeletionStuck
		case ready.Status == "True" && s.cfg.Adapters != nil:
			adapters, ok := required[o.ServiceType]
			if !ok {
				adapters, _ = s.cfg.Catalog.RequiredAdapters(ctx, o.ServiceType)
				required[o.ServiceType] = adapters
			}
			if len(adapters) == 0 {
				break
			}
			reports, err := s.cfg.Adapters.All(ctx, o.ID)
			hold := ""
			if err != nil {
				hold = "adapter reports could not be read: " + err.Error()
			} else {
				hold = adaptersHold(adapters, reports, o.Generation)
			}
			if hold != "" {
				ready.Status, ready.Reason, ready.Message = "False", reasonAdaptersNotReady, "waiting for "+hold
			}
		}
		if h, ok := s.healthy(ctx, o, runtimes); ok {
			cs = append(cs, h)
		}
		return cs
	}
}

// adaptersHold says which of the required adapters do not report
// Available=True at generation, and why; "" when all do.
func adaptersHold(required []string, reports []adapterstatus.Report, generation int64) string {
	latest := make(map[string]adapterstatus.Report, len(reports))
	for _, r := range reports {
		latest[r.Adapter] = r
	}
	var held []string
	for _, name := range required {
		r, ok := latest[name]
		switch {
		case !ok:
			held = append(held, fmt.Sprintf("adapter %s (no report yet)", name))
		case r.ObservedGeneration != generation:
			held = append(held, fmt.Sprintf("adapter %s (its last report is of generation %d, the order is at %d)",
				name, r.ObservedGeneration, generation))
		case !r.Is(adapterstatus.Available, true):
			c, _ := r.Condition(adapterstatus.Available)
			why := strings.TrimSpace(c.Reason + " " + c.Message)
			if why == "" {
				why = "no reason given"
			}
			held = append(held, fmt.Sprintf("adapter %s (Available=%s: %s)", name, c.Status, why))
		}
	}
	return strings.Join(held, "; ")
}
