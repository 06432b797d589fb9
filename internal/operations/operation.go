package operations

import (
	"encoding/json"
	"time"
)

// Operation is a long-running operation (API.md, Operations).
type Operation struct {
	ID      string
	Project string
	// Kind names the work ("rehydrate", "delete", "repair", ...).
	Kind string
	// Target is the resource path the work is on ("catalog-item-instances/x").
	Target string
	Done   bool
	// Metadata holds kind-specific progress; it always includes kind and target.
	Metadata map[string]any
	// Response is the result of a successful operation, once done.
	Response json.RawMessage
	// Error is the problem of a failed operation, once done.
	Error      json.RawMessage
	CreateTime time.Time
	UpdateTime time.Time
}

// Path is the operation's resource path.
func (o Operation) Path() string { return "operations/" + o.ID }

// MarshalJSON renders the API shape.
func (o Operation) MarshalJSON() ([]byte, error) {
	type wire struct {
		ID         string          `json:"id"`
		Path       string          `json:"path"`
		Done       bool            `json:"done"`
		Metadata   map[string]any  `json:"metadata"`
		Response   json.RawMessage `json:"response,omitempty"`
		Error      json.RawMessage `json:"error,omitempty"`
		CreateTime time.Time       `json:"create_time"`
		UpdateTime time.Time       `json:"update_time"`
	}
	return json.Marshal(wire{o.ID, o.Path(), o.Done, o.Metadata, o.Response, o.Error, o.CreateTime, o.UpdateTime})
}
