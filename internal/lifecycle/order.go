package lifecycle

import (
	"encoding/json"
	"time"

	"github.com/stewardhq/steward/internal/catalog"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/pkg/provider"
)

// Order is a catalog item instance (API.md, Orders): the user's object,
// driven through its service type's lifecycle by the engine. InstanceID is
// its current resource (ID separation): the id placement and the SPRM know
// it by, "" until the order is first realised.
type Order struct {
	ID            string              `json:"id"`
	Project       string              `json:"project"`
	CatalogItemID string              `json:"catalog_item_id"`
	ServiceType   string              `json:"service_type"`
	DisplayName   string              `json:"display_name"`
	Labels        map[string]string   `json:"labels"`
	UserValues    []catalog.UserValue `json:"user_values"`
	ParentID      *string             `json:"parent_id"`
	State         string              `json:"state"`
	Lifecycle     string              `json:"lifecycle"`
	// Version counts the order's transfers (and edits); a self-transfer
	// with no operation does not bump it.
	Version int64 `json:"version"`
	// Generation counts changes of the desired state an adapter acts on:
	// the create, each change of the active set after it (an update
	// promoted, a rollback), and the delete.
	Generation    int64            `json:"generation"`
	Attributes    order.Attributes `json:"attributes"`
	InstanceID    string           `json:"instance_id"`
	ProviderName  string           `json:"provider_name"`
	Status        provider.Status  `json:"status"`
	StatusMessage string           `json:"status_message"`
	// Status, StatusMessage and RestartCount are the current instance's as
	// the reconcile last applied them (the order's own record, written with
	// the transfer they fire: docs/architecture.md). RestartCount is nil
	// until a report carries one.
	RestartCount *int64 `json:"restart_count,omitempty"`
	// LastError says why the last validation or realisation failed ("" when
	// the last one succeeded).
	LastError  string     `json:"last_error"`
	CreateTime time.Time  `json:"create_time"`
	UpdateTime time.Time  `json:"update_time"`
	DeletedAt  *time.Time `json:"deleted_at"`
	// ExpireTime is when a removed order (a tombstone, AIP-164) is purged;
	// nil until the order is removed.
	ExpireTime *time.Time `json:"expire_time"`

	// Terminal is set in a state its lifecycle marks deleted.
	Terminal bool `json:"-"`
	// Identity is the value of the service type's identity attribute.
	Identity *string `json:"-"`
	// PendingInstanceID is the resource the order waits on before a
	// resource transfer may fire: its own InstanceID while an in-place
	// update is sent, a replacing resource's id while one is created; ""
	// when nothing is pending.
	PendingInstanceID string `json:"-"`
	// valueSets are the user values of each attribute set; UserValues is
	// the shown one (see userValueSets.shown).
	valueSets userValueSets
	// validation is what the last successful validation made of the
	// candidate set (the policy chain's spec and provider); it is used when
	// that set, promoted, is realised.
	validation *placement.Placement
	// inline is a validation already run for the next validating transfer
	// (in the request, before its transaction); nil when the transfer's
	// validation must be queued.
	inline *inlineValidation
	// events are the transfers taken since the order was read, written
	// with it.
	events []Event
	// wide is set when a column beyond state and status changed (attribute
	// sets, validation, labels, values): saving then writes the whole row.
	wide bool
	// requestKey is the creating request's (written at insert only).
	requestKey string
	// attributesJSON holds the stored attribute sets, undecoded, of an
	// order read for a list; Attributes is then empty, and activeListed
	// says whether its active set is there (for Conditions).
	attributesJSON json.RawMessage
	activeListed   bool
	// outputsJSON are the current instance's outputs as stored (nil: none),
	// when outputsRead: the order was read by a query that has them.
	outputsJSON json.RawMessage
	outputsRead bool
	// synced is the current instance's last comparison with its spec, as
	// its provider reported it (nil: none, or not read: see outputsRead).
	synced *provider.Sync
	// copyingTo is the new instance of a running rehydration that is
	// copying the data (nil: none, or not read).
	copyingTo *string
	// labelsJSON and userValuesJSON are the stored labels and user values
	// of an order read for a list, undecoded (Labels and UserValues are
	// then empty): a view passes them through.
	labelsJSON, userValuesJSON json.RawMessage
}

// asCreated is an order as its create wrote it, shown as a read of the row
// would show it: labels and user values stored are never null, and a new
// order's instance has no outputs yet (its provisioning starts after the
// commit), so none are read for it.
func (o Order) asCreated() Order {
	o.Labels = nonNilMap(o.Labels)
	o.UserValues = nonNilSlice(o.UserValues)
	o.events = nil
	o.outputsRead = true
	return o
}

// awaitsRemoval says whether o is being deleted and not removed yet: its
// deletion gate is still to open.
func (o Order) awaitsRemoval() bool { return o.DeletedAt != nil && !o.Terminal }

// hasActive reports whether the order has an active attribute set, also
// when it was read for a list with its attribute sets undecoded.
func (o Order) hasActive() bool { return o.Attributes.Active != nil || o.activeListed }

// inlineValidation is the outcome of the policy chain on a set, run in the
// request so the answer shows it and no job hop is needed.
type inlineValidation struct {
	placed placement.Placement
	// err is a validation failure (a policy refusal, no provider, ...).
	err error
}

// Event is one line of an order's lifecycle log: a transfer, with the
// version it produced, or a change its provider reported (trigger report
// or resync), which leaves the version as it was.
type Event struct {
	Version   int64     `json:"version"`
	Time      time.Time `json:"time"`
	Trigger   string    `json:"trigger"`
	From      string    `json:"from"`
	To        string    `json:"to"`
	Operation string    `json:"operation"`
	Error     string    `json:"error"`
	// ReportedBy names the provider whose report made the change.
	ReportedBy string `json:"reported_by,omitempty"`
	// Changes holds what a report changed on the order, by member (and
	// what a rehydration's move changed: instance_id, provider_name).
	Changes map[string]Change `json:"changes,omitempty"`
	// OperationID, InstanceID, ProviderName and Message are those of a
	// note (trigger rehydrate or cleanup): the operation it belongs to, the
	// instance it is about and its provider, and what happened.
	OperationID  string `json:"operation_id,omitempty"`
	InstanceID   string `json:"instance_id,omitempty"`
	ProviderName string `json:"provider_name,omitempty"`
	Message      string `json:"message,omitempty"`

	// seq orders the events of one version: 0 for its transfer, then one
	// per report. It is the second half of the list's keyset.
	seq int64
}

// Change is one member's value before and after a reported change.
type Change struct {
	From any `json:"from"`
	To   any `json:"to"`
}

// validationJSON is how Order.validation is stored.
func (o Order) validationJSON() any {
	if o.validation == nil {
		return nil
	}
	return o.validation
}

func decodeValidation(raw json.RawMessage) (*placement.Placement, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var p placement.Placement
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// userValueSets are the user values each attribute set was asked with, so
// that an order's user_values follow its sets: an aborted update (clear
// candidate) or a rollback shows again the values of the set that runs.
type userValueSets struct {
	Candidate []catalog.UserValue `json:"candidate"`
	Active    []catalog.UserValue `json:"active"`
	Rollback  []catalog.UserValue `json:"rollback"`
}

// after returns the value sets after op, moved as [statemachine.ApplyOperation] moves
// the attribute sets.
func (v userValueSets) after(op statemachine.Operation) userValueSets {
	switch op {
	case statemachine.OpPromote:
		return userValueSets{Active: v.Candidate, Rollback: v.Active}
	case statemachine.OpRollback:
		return userValueSets{Candidate: v.Active, Active: v.Rollback}
	case statemachine.OpClearCandidate:
		v.Candidate = nil
	case statemachine.OpClearActive:
		v.Active = nil
	case statemachine.OpClearRollback:
		v.Rollback = nil
	}
	return v
}

// shown returns the user values an order shows: those of its candidate
// set while it has one (the update asked for), else the active set's.
func (v userValueSets) shown(sets order.Attributes) []catalog.UserValue {
	if sets.Candidate != nil {
		return v.Candidate
	}
	return v.Active
}
