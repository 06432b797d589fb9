package statemachine

import (
	"encoding/json"
	"regexp"
	"slices"
)

// ModelState is how the rest of Steward treats an order in a state (LSM's
// model_state): left out, validated with its candidate attributes, accepted
// and queued, or realised with its active attributes.
type ModelState string

// The model states.
const (
	ModelStateInactive  ModelState = "inactive"
	ModelStateCandidate ModelState = "candidate"
	ModelStateDesigned  ModelState = "designed"
	ModelStateActive    ModelState = "active"
)

var modelStates = []ModelState{ModelStateInactive, ModelStateCandidate, ModelStateDesigned, ModelStateActive}

// Label is how a user interface shows a state.
type Label string

// The labels. An empty label means LabelInfo.
const (
	LabelInfo    Label = "info"
	LabelSuccess Label = "success"
	LabelWarning Label = "warning"
	LabelDanger  Label = "danger"
)

var labels = []Label{LabelInfo, LabelSuccess, LabelWarning, LabelDanger}

// AttributeSet names one of an order's three attribute sets. A state's
// ValidateSelf is SetCandidate, SetActive or "" (JSON null: the order is
// left out of validation in that state).
type AttributeSet string

// The attribute sets.
const (
	SetCandidate AttributeSet = "candidate"
	SetActive    AttributeSet = "active"
	SetRollback  AttributeSet = "rollback"
)

// MarshalJSON writes "" as null.
func (a AttributeSet) MarshalJSON() ([]byte, error) { return nullString(string(a)) }

// Trigger is what fires a transfer. Creating an order is not a transfer:
// a new order enters the lifecycle's initial state with the posted
// attributes as its candidate set.
type Trigger string

// The triggers.
const (
	// TriggerAuto fires as soon as an order reaches the source state.
	TriggerAuto Trigger = "auto"
	// TriggerAPI fires on an explicit request (`:setState`) naming the
	// source and the target.
	TriggerAPI Trigger = "api"
	// TriggerOnUpdate fires on a PATCH of the order: the new attributes are
	// stored as the candidate set, then the transfer runs. An order can only
	// be updated in a state that has one.
	TriggerOnUpdate Trigger = "on_update"
	// TriggerOnDelete fires on a DELETE of the order. An order can only be
	// deleted in a state that has one.
	TriggerOnDelete Trigger = "on_delete"
	// TriggerResource fires when the order's resources report the outcome
	// of a deployment: success goes to the target, failure to the error
	// state.
	TriggerResource Trigger = "resource"
)

var triggers = []Trigger{TriggerAuto, TriggerAPI, TriggerOnUpdate, TriggerOnDelete, TriggerResource}

// Triggers returns every trigger, for the lists that must name them all
// (an API document's enum of event triggers).
func Triggers() []Trigger { return slices.Clone(triggers) }

// Operation changes an order's attribute sets when it follows a transfer's
// edge. "" (JSON null) changes nothing. See [ApplyOperation].
type Operation string

// The operations (LSM's).
const (
	// OpPromote moves candidate to active and active to rollback; the
	// candidate set is then empty. It needs a candidate set.
	OpPromote Operation = "promote"
	// OpRollback moves rollback to active and active to candidate; the
	// rollback set is then empty. It needs a rollback set.
	OpRollback Operation = "rollback"
	// OpClearCandidate empties the candidate set.
	OpClearCandidate Operation = "clear candidate"
	// OpClearActive empties the active set.
	OpClearActive Operation = "clear active"
	// OpClearRollback empties the rollback set.
	OpClearRollback Operation = "clear rollback"
)

var allOperations = []Operation{OpPromote, OpRollback, OpClearCandidate, OpClearActive, OpClearRollback}

// MarshalJSON writes "" as null.
func (o Operation) MarshalJSON() ([]byte, error) { return nullString(string(o)) }

// Size limits of a definition, so that checking one stays cheap: the
// analyses are linear in the transfers, but a compact line with "*" or a
// long list of them multiplies.
const (
	MaxStates    = 1000
	MaxTransfers = 10000
)

// stateNamePattern keeps state names to words the compact form can parse.
var stateNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// State is one state of a lifecycle. The engine acts on entering it
// (DESIGN §3): ExportResources makes sure a resource exists with the active
// attributes, PurgeResources deletes it, Deleted ends the order's life.
type State struct {
	Name       string     `json:"name"`
	ModelState ModelState `json:"model_state"`
	// ExportResources: the order's resources are realised with its active
	// attributes while it is in this state.
	ExportResources bool `json:"export_resources"`
	// PurgeResources: the order's resources are deleted (two-phase) while
	// it is in this state.
	PurgeResources bool `json:"purge_resources"`
	// Deleted marks a terminal state: the order is a tombstone.
	Deleted bool `json:"deleted"`
	// ValidateSelf is the attribute set validations use for this order while
	// it is in this state; "" leaves it out.
	ValidateSelf AttributeSet `json:"validate_self"`
	// Label is for user interfaces. Defaults to LabelInfo.
	Label Label `json:"label"`
}

// Transfer is an edge of a lifecycle: from Source to Target, or to Error
// when a validating or resource transfer fails.
type Transfer struct {
	Source  string  `json:"source"`
	Target  string  `json:"target"`
	Trigger Trigger `json:"trigger"`
	// Error is where a failed validation (Validate) or deployment
	// (TriggerResource) goes; "" (JSON null) on other transfers. A resource
	// transfer's Error defaults to its Source (retry).
	Error string `json:"error"`
	// Validate runs a validation of the candidate attributes first (auto and
	// api transfers only): success goes to Target, failure to Error.
	Validate bool `json:"validate"`
	// TargetOperation is applied to the attribute sets on the way to Target.
	TargetOperation Operation `json:"target_operation"`
	// ErrorOperation is applied to the attribute sets on the way to Error.
	ErrorOperation Operation `json:"error_operation"`
	Description    string    `json:"description"`
}

// MarshalJSON writes an empty Error as null.
func (t Transfer) MarshalJSON() ([]byte, error) {
	type plain Transfer
	var errState *string
	if t.Error != "" {
		errState = &t.Error
	}
	return json.Marshal(struct {
		plain
		Error *string `json:"error"`
	}{plain(t), errState})
}

// Definition is a lifecycle's state machine. Its methods are safe for
// concurrent use as long as nobody changes it.
type Definition struct {
	InitialState string     `json:"initial_state"`
	States       []State    `json:"states"`
	Transfers    []Transfer `json:"transfers"`
}

// State returns the state with the name.
func (d Definition) State(name string) (State, bool) {
	for _, s := range d.States {
		if s.Name == name {
			return s, true
		}
	}
	return State{}, false
}

// Transfer returns source's transfer fired by trigger: TriggerAuto,
// TriggerOnUpdate, TriggerOnDelete or TriggerResource, of which a state has
// at most one each. It reports false when the state has none, and for
// TriggerAPI (use [Definition.APITransfer]).
func (d Definition) Transfer(source string, trigger Trigger) (Transfer, bool) {
	if trigger == TriggerAPI {
		return Transfer{}, false
	}
	for _, t := range d.Transfers {
		if t.Source == source && t.Trigger == trigger {
			return t, true
		}
	}
	return Transfer{}, false
}

// APITransfer returns the api transfer from source to target, of which
// there is at most one, or false.
func (d Definition) APITransfer(source, target string) (Transfer, bool) {
	for _, t := range d.Transfers {
		if t.Source == source && t.Target == target && t.Trigger == TriggerAPI {
			return t, true
		}
	}
	return Transfer{}, false
}

// Source is a lifecycle definition as a client writes it: in full
// (Definition) or in compact form (Compact), which [Source.Expand]
// expands. With Compact set, the full members must be left out (nil, "") or equal
// its expansion, as a GET answers them.
type Source struct {
	Definition
	// Compact is the compact form; nil or JSON null when the definition is
	// given in full.
	Compact json.RawMessage
}

func nullString(s string) ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return json.Marshal(s)
}
