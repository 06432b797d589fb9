package status

import (
	"cmp"
	"time"
)

// Condition is one condition of an order (API.md).
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason"`
	Message            string    `json:"message"`
	LastTransitionTime time.Time `json:"last_transition_time"`
}

// The conditions' types and statuses.
const (
	ConditionReady   = "Ready"
	ConditionHealthy = "Healthy"

	True    = "True"
	False   = "False"
	Unknown = "Unknown"
)

// Reasons of the Ready condition.
const (
	ReasonRejected         = "Rejected"
	ReasonTerminated       = "Terminated"
	ReasonDeleting         = "Deleting"
	ReasonDeletionStuck    = "DeletionStuck"
	ReasonFailed           = "Failed"
	ReasonRunning          = "Running"
	ReasonCompleted        = "Completed"
	ReasonProvisioning     = "Provisioning"
	ReasonAdaptersNotReady = "AdaptersNotReady"
)

// Resource is what the status rules tell apart of an order's resource's
// status as its provider last reported it.
type Resource int

const (
	// ResourceNotRunning is every status but the two below (pending,
	// provisioning, failed, deleted, none yet).
	ResourceNotRunning Resource = iota
	// ResourceRunning is a resource that runs (RUNNING).
	ResourceRunning
	// ResourceCompleted is a resource that ran to its end and succeeded
	// (COMPLETED).
	ResourceCompleted
)

// Order is what the status rules read of an order.
type Order struct {
	ID          string
	ServiceType string
	// Generation is the order's current generation, which adapters report
	// against (the delete bumps it).
	Generation int64
	// DeletedAt is when its deletion was asked for; nil when it was not.
	DeletedAt *time.Time
	// Terminal is set in a state its lifecycle marks deleted.
	Terminal bool
	// Failed is set in a state its lifecycle labels danger.
	Failed bool
	// Purging is set in a state that purges resources.
	Purging bool
	// Resource and ResourceMessage are its resource's status and message.
	Resource        Resource
	ResourceMessage string
	// Realised is set once it has an active attribute set, and Pending
	// while it waits on a resource (an update or a replacement) before its
	// resource transfer may fire.
	Realised bool
	Pending  bool
	// LastError says why its last validation or realisation failed, or
	// what its deletion waits for.
	LastError  string
	UpdateTime time.Time
}

// Ready derives the order's Ready condition from its state and its
// resource's status: True while a realised order's resource runs (or ran
// to a successful end) and it is neither failed, being deleted, pending
// nor gone. A deletion asked for longer than stuckAfter before now says
// DeletionStuck rather than Deleting. The required adapters are
// [AdaptersReady]'s.
func Ready(o Order, now time.Time, stuckAfter time.Duration) Condition {
	c := Condition{Type: ConditionReady, Status: False, LastTransitionTime: o.UpdateTime, Message: o.LastError}
	settled := o.Realised && !o.Pending
	switch {
	case o.Terminal && o.DeletedAt == nil && o.Failed:
		c.Reason = ReasonRejected
	case o.Terminal:
		c.Reason = ReasonTerminated
	case o.DeletedAt != nil || o.Purging:
		c.Reason = ReasonDeleting
		if o.DeletedAt != nil && now.Sub(*o.DeletedAt) > stuckAfter {
			c.Reason = ReasonDeletionStuck
		}
	case o.Failed:
		c.Reason = ReasonFailed
		c.Message = cmp.Or(o.LastError, o.ResourceMessage)
	case o.Resource == ResourceRunning && settled:
		c.Status, c.Reason = True, ReasonRunning
	case o.Resource == ResourceCompleted && settled:
		// Ran to its end and succeeded: settled, nothing to wait for.
		c.Status, c.Reason, c.Message = True, ReasonCompleted, o.ResourceMessage
	default:
		c.Reason = ReasonProvisioning
	}
	return c
}
