package status

import "time"

// Runtime health as providers and repair workers report it (any other
// value, "failed" included, is failed).
const (
	RuntimeHealthy  = "healthy"
	RuntimeDegraded = "degraded"
)

// Reasons of the Healthy condition.
const (
	ReasonHealthy           = "Healthy"
	ReasonDegraded          = "Degraded"
	ReasonRuntimeFailed     = "Failed"
	ReasonRuntimeUnreadable = "RuntimeUnreadable"
)

// Runtime is an app instance's runtime as last reported: its health
// (healthy, degraded or failed), a message saying which members are not
// healthy, and when it was observed.
type Runtime struct {
	// Reported is false when no runtime was ever reported for the order
	// (or its service type has none).
	Reported     bool
	Health       string
	Message      string
	ObservedTime time.Time
	// ReadErr is why the runtime could not be read.
	ReadErr error
}

// Healthy derives o's Healthy condition from its runtime rt: True while
// healthy, False with reason Degraded or Failed and the runtime's message
// otherwise, Unknown when it could not be read. An order without a
// reported runtime, or that is gone, has none (ok false). Ready does not
// follow it: a degraded runtime still serves.
func Healthy(o Order, rt Runtime) (c Condition, ok bool) {
	switch {
	case o.Terminal:
		return Condition{}, false
	case rt.ReadErr != nil:
		return Condition{Type: ConditionHealthy, Status: Unknown, Reason: ReasonRuntimeUnreadable,
			Message: "the runtime could not be read: " + rt.ReadErr.Error(), LastTransitionTime: o.UpdateTime}, true
	case !rt.Reported:
		return Condition{}, false
	}
	c = Condition{Type: ConditionHealthy, Status: False, Reason: ReasonRuntimeFailed, Message: rt.Message,
		LastTransitionTime: rt.ObservedTime}
	switch rt.Health {
	case RuntimeHealthy:
		c.Status, c.Reason = True, ReasonHealthy
	case RuntimeDegraded:
		c.Reason = ReasonDegraded
	}
	return c, true
}
