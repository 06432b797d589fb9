package lifecycle

import (
	"context"
	"time"
)

// Reasons of the Healthy condition, and its type.
const (
	ConditionHealthy      = "Healthy"
	reasonHealthy         = "Healthy"
	reasonDegraded        = "Degraded"
	reasonFailed          = "Failed"
	reasonRuntimeUnknown  = "RuntimeUnreadable"
	runtimeHealthHealthy  = "healthy"
	runtimeHealthDegraded = "degraded"
)

// RuntimeHealth is an app instance's runtime as last reported: its health
// (healthy, degraded or failed), a message saying which members are not
// healthy, and when it was observed.
type RuntimeHealth struct {
	Health       string
	Message      string
	ObservedTime time.Time
}

// Runtimes reads the runtimes providers and repair workers report (the
// repair domain).
type Runtimes interface {
	// RuntimeHealth returns the runtime last reported for the order; ok is
	// false when none was.
	RuntimeHealth(ctx context.Context, orderID string) (h RuntimeHealth, ok bool, err error)
}

// healthy derives the order's Healthy condition from its runtime as last
// reported, read when the order is shown (like adapter reports): True
// while healthy, False with reason Degraded or Failed and the runtime's
// message otherwise. An order whose service type has no runtime, or whose
// runtime was never reported, or that is gone, has none (ok false). Ready
// does not follow it: a degraded runtime still serves.
func (s *Service) healthy(ctx context.Context, o Order, hasRuntime map[string]bool) (Condition, bool) {
	if s.cfg.Runtimes == nil || o.Terminal {
		return Condition{}, false
	}
	has, seen := hasRuntime[o.ServiceType]
	if !seen {
		st, err := s.cfg.Catalog.ServiceType(ctx, o.ServiceType)
		has = err == nil && st.Runtime != nil
		hasRuntime[o.ServiceType] = has
	}
	if !has {
		return Condition{}, false
	}
	h, ok, err := s.cfg.Runtimes.RuntimeHealth(ctx, o.ID)
	switch {
	case err != nil:
		return Condition{Type: ConditionHealthy, Status: "Unknown", Reason: reasonRuntimeUnknown,
			Message: "the runtime could not be read: " + err.Error(), LastTransitionTime: o.UpdateTime}, true
	case !ok:
		return Condition{}, false
	}
	c := Condition{Type: ConditionHealthy, Status: "False", Reason: reasonFailed, Message: h.Message,
		LastTransitionTime: h.ObservedTime}
	switch h.Health {
	case runtimeHealthHealthy:
		c.Status, c.Reason = "True", reasonHealthy
	case runtimeHealthDegraded:
		c.Reason = reasonDegraded
	}
	return c, true
}
