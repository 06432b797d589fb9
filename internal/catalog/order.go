package catalog

import (
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// Order states of the fixed path orders follow until the lifecycle engine
// arrives: creating → up | failed → deleting → terminated.
const (
	StateCreating   = "creating"
	StateUp         = "up"
	StateFailed     = "failed"
	StateDeleting   = "deleting"
	StateTerminated = "terminated"
)

// Order is a catalog item instance (API.md, Orders): the user's object.
// InstanceID is its current resource (ID separation): the id placement and
// the SPRM know it by.
type Order struct {
	ID            string            `json:"id"`
	Project       string            `json:"project"`
	CatalogItemID string            `json:"catalog_item_id"`
	ServiceType   string            `json:"service_type"`
	DisplayName   string            `json:"display_name"`
	Labels        map[string]string `json:"labels"`
	UserValues    []UserValue       `json:"user_values"`
	ParentID      *string           `json:"parent_id"`
	State         string            `json:"state"`
	Lifecycle     string            `json:"lifecycle"`
	Version       int64             `json:"version"`
	Generation    int64             `json:"generation"`
	Attributes    Attributes        `json:"attributes"`
	InstanceID    string            `json:"instance_id"`
	ProviderName  string            `json:"provider_name"`
	Status        provider.Status   `json:"status"`
	StatusMessage string            `json:"status_message"`
	CreateTime    time.Time         `json:"create_time"`
	UpdateTime    time.Time         `json:"update_time"`
	DeletedAt     *time.Time        `json:"deleted_at"`
}

// Attributes are an order's attribute sets: the candidate (the spec built
// from the catalog item and the user's values), the active one (after the
// policy chain) and the rollback set (none yet).
type Attributes struct {
	Candidate map[string]any `json:"candidate"`
	Active    map[string]any `json:"active"`
	Rollback  map[string]any `json:"rollback"`
}

// Condition is one condition of an order (API.md).
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason"`
	Message            string    `json:"message"`
	LastTransitionTime time.Time `json:"last_transition_time"`
}

// Conditions derives the order's conditions from its state: Ready.
func (o Order) Conditions() []Condition {
	c := Condition{Type: "Ready", Status: "False", LastTransitionTime: o.UpdateTime}
	switch o.State {
	case StateUp:
		c.Status, c.Reason = "True", "Running"
	case StateFailed:
		c.Reason, c.Message = "Failed", o.StatusMessage
	case StateDeleting:
		c.Reason = "Deleting"
	case StateTerminated:
		c.Reason = "Terminated"
	default:
		c.Reason = "Provisioning"
	}
	return []Condition{c}
}

// lifecycle decides an order's state from its current resource's status.
// The lifecycle engine will replace simpleLifecycle behind it.
type lifecycle interface {
	// StateFor returns the state an order in state current enters when its
	// current resource reports status; deleting is set once the order's
	// deletion was requested.
	StateFor(current string, status provider.Status, deleting bool) string
}

// simpleLifecycle is the fixed path: creating → up (RUNNING) or failed
// (FAILED, or the resource vanished) → deleting → terminated (DELETED).
type simpleLifecycle struct{}

func (simpleLifecycle) StateFor(current string, status provider.Status, deleting bool) string {
	switch {
	case current == StateTerminated:
		return current
	case deleting && status == provider.StatusDeleted:
		return StateTerminated
	case deleting:
		return StateDeleting
	case status == provider.StatusRunning:
		return StateUp
	case status == provider.StatusFailed, status == provider.StatusDeleted:
		return StateFailed
	}
	return current
}
