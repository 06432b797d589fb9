package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/limits"
	"github.com/stewardhq/steward/internal/resourceid"
)

// Type is a policy's level in the chain: every GLOBAL policy runs before
// every TENANT one, and those before every USER one.
type Type string

// The levels, highest first.
const (
	TypeGlobal Type = "GLOBAL"
	TypeTenant Type = "TENANT"
	TypeUser   Type = "USER"
)

// rank orders the levels: lower runs first and outranks the others.
func (t Type) rank() int {
	switch t {
	case TypeGlobal:
		return 0
	case TypeTenant:
		return 1
	case TypeUser:
		return 2
	}
	return -1
}

// Valid reports whether t is one of the levels.
func (t Type) Valid() bool { return t.rank() >= 0 }

// Priority bounds (DCM's): lower runs first within a level.
const (
	MinPriority     = 1
	MaxPriority     = 1000
	DefaultPriority = 500
)

// maxNameLength bounds display_name, as every display name is bounded.
const maxNameLength = limits.MaxDisplayName

// Policy is a stored policy (API.md, Policies).
type Policy struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	PolicyType  Type   `json:"policy_type"`
	// Priority orders policies within a level, 1 to 1000, lower first.
	Priority int `json:"priority"`
	// LabelSelector must be matched by a request for the policy to run: key
	// "service_type" against the service type, "project" against the
	// project, any other key against the request's labels. Empty matches all.
	LabelSelector map[string]string `json:"label_selector"`
	// RegoCode is a Rego v1 module whose package defines a rule main.
	RegoCode   string    `json:"rego_code"`
	Enabled    bool      `json:"enabled"`
	Version    int64     `json:"-"`
	CreateTime time.Time `json:"create_time"`
	UpdateTime time.Time `json:"update_time"`
}

// Ref names the policy in errors.
func (p Policy) Ref() Ref { return Ref{ID: p.ID, Name: p.DisplayName} }

// Matches reports whether the policy's label selector selects a request
// with serviceType, project and labels.
func (p Policy) Matches(serviceType, project string, labels map[string]string) bool {
	for k, want := range p.LabelSelector {
		var got string
		var ok bool
		switch k {
		case "service_type":
			got, ok = serviceType, true
		case "project":
			got, ok = project, true
		default:
			got, ok = labels[k]
		}
		if !ok || got != want {
			return false
		}
	}
	return true
}

// CreateParams is a new policy. Zero Priority means DefaultPriority and nil
// Enabled means true.
type CreateParams struct {
	// ID is the client's id (API.md `?id=`); empty generates a UUID.
	ID            string
	DisplayName   string
	PolicyType    Type
	Priority      int
	LabelSelector map[string]string
	RegoCode      string
	Enabled       *bool
}

// Patch is a JSON merge patch (RFC 7386) of a policy: members
// display_name, priority, label_selector, rego_code and enabled change
// (label_selector merges key by key; a null key deletes it, a null
// selector clears it). policy_type may be given only with its current
// value; other members are ignored.
type Patch map[string]any

// mutable is the patchable document of a policy.
type mutable struct {
	DisplayName   string            `json:"display_name"`
	PolicyType    Type              `json:"policy_type"`
	Priority      int               `json:"priority"`
	LabelSelector map[string]string `json:"label_selector"`
	RegoCode      string            `json:"rego_code"`
	Enabled       bool              `json:"enabled"`
}

// apply returns p with patch merged in, or an *invalid.Error naming a member
// of the wrong type.
func (patch Patch) apply(p Policy) (Policy, error) {
	doc, err := toJSONValue(mutable{p.DisplayName, p.PolicyType, p.Priority, p.LabelSelector, p.RegoCode, p.Enabled})
	if err != nil {
		return Policy{}, err
	}
	keep := make(Patch, len(patch))
	for k, v := range patch {
		switch k {
		case "display_name", "priority", "label_selector", "rego_code", "enabled", "policy_type":
			keep[k] = v
		}
	}
	b, err := json.Marshal(mergePatch(doc, map[string]any(keep)))
	if err != nil {
		return Policy{}, fmt.Errorf("encode patched policy: %w", err)
	}
	var m mutable
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&m); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return Policy{}, invalid.New(typeErr.Field, "must be %s, not %s", typeErr.Type.Kind(), typeErr.Value)
		}
		return Policy{}, fmt.Errorf("decode patched policy: %w", err)
	}
	if m.PolicyType != p.PolicyType {
		return Policy{}, invalid.Immutable("policy_type", p.PolicyType)
	}
	p.DisplayName, p.Priority, p.LabelSelector, p.RegoCode, p.Enabled =
		m.DisplayName, m.Priority, m.LabelSelector, m.RegoCode, m.Enabled
	return p, nil
}

// validate checks the fields a client sets.
func validate(p Policy) error {
	var errs invalid.Errors
	// A new policy's client-chosen id follows AEP-122 (package resourceid);
	// a stored one (Version set: an update) keeps the id it has.
	if p.ID != "" && p.Version == 0 && !resourceid.Valid(p.ID) {
		errs.Add("id", "%s", resourceid.Message)
	}
	switch name := strings.TrimSpace(p.DisplayName); {
	case name == "":
		errs.Add("display_name", "is required")
	case utf8.RuneCountInString(p.DisplayName) > maxNameLength:
		errs.Add("display_name", "must be at most %d characters long", maxNameLength)
	}
	if !p.PolicyType.Valid() {
		errs.Add("policy_type", "must be GLOBAL, TENANT or USER")
	}
	if p.Priority < MinPriority || p.Priority > MaxPriority {
		errs.Add("priority", "must be between %d and %d", MinPriority, MaxPriority)
	}
	limits.CheckLabels(&errs, "label_selector", p.LabelSelector)
	switch {
	case strings.TrimSpace(p.RegoCode) == "":
		errs.Add("rego_code", "is required")
	case len(p.RegoCode) > limits.MaxRegoCode:
		errs.Add("rego_code", "must be at most %d bytes (256 KiB), not %d", limits.MaxRegoCode, len(p.RegoCode))
	}
	return errs.Err()
}
