package lifecycle

import (
	"github.com/stewardhq/steward/internal/adapterstatus"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/status"
	"github.com/stewardhq/steward/pkg/provider"
)

// Condition is one condition of an order (API.md), as package status
// derives it.
type Condition = status.Condition

// statusOrder is what the status rules read of order o in state st (the
// zero State where the rule at hand reads no state: the deletion gate).
func statusOrder(o *Order, st statemachine.State) status.Order {
	return status.Order{
		ID:              o.ID,
		ServiceType:     o.ServiceType,
		Generation:      o.Generation,
		DeletedAt:       o.DeletedAt,
		Terminal:        o.Terminal,
		Failed:          st.Label == statemachine.LabelDanger,
		Purging:         st.PurgeResources,
		Resource:        statusResource(o.Status),
		ResourceMessage: o.StatusMessage,
		Realised:        o.hasActive(),
		Pending:         o.PendingInstanceID != "",
		LastError:       o.LastError,
		UpdateTime:      o.UpdateTime,
	}
}

func statusResource(s provider.Status) status.Resource {
	switch s {
	case provider.StatusRunning:
		return status.ResourceRunning
	case provider.StatusCompleted:
		return status.ResourceCompleted
	}
	return status.ResourceNotRunning
}

// statusReports turns the adapters' stored reports into what the status
// rules read of them.
func statusReports(reports []adapterstatus.Report) []status.Report {
	out := make([]status.Report, len(reports))
	for i, r := range reports {
		cond := func(t string) status.ReportCondition {
			c, _ := r.Condition(t)
			return status.ReportCondition{Status: c.Status, Reason: c.Reason, Message: c.Message}
		}
		out[i] = status.Report{Adapter: r.Adapter, ObservedGeneration: r.ObservedGeneration, ObservedTime: r.ObservedTime,
			Applied: cond(adapterstatus.Applied), Available: cond(adapterstatus.Available),
			Health: cond(adapterstatus.Health), Finalized: cond(adapterstatus.Finalized)}
	}
	return out
}
