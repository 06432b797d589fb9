package adapterstatus

import (
	"encoding/json"
	"regexp"
	"strconv"
	"time"

	"github.com/stewardhq/steward/internal/invalid"
)

// Condition types every report carries (API.md), and the optional one
// that passes the deletion gate alone.
const (
	Applied   = "Applied"
	Available = "Available"
	Health    = "Health"
	Finalized = "Finalized"
)

// Condition is one of a report's conditions.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Report is an adapter's report on an order, as stored.
type Report struct {
	OrderID            string          `json:"-"`
	Adapter            string          `json:"adapter"`
	ObservedGeneration int64           `json:"observed_generation"`
	ObservedTime       time.Time       `json:"observed_time"`
	Conditions         []Condition     `json:"conditions"`
	Data               json.RawMessage `json:"data"`
	// CreateTime is when the adapter first reported on the order;
	// UpdateTime when the stored report last changed.
	CreateTime time.Time `json:"create_time"`
	UpdateTime time.Time `json:"update_time"`
}

// Condition returns the report's condition of type t, and whether it has one.
func (r Report) Condition(t string) (Condition, bool) {
	for _, c := range r.Conditions {
		if c.Type == t {
			return c, true
		}
	}
	return Condition{}, false
}

// Is reports whether the report's condition t has status "True" (want
// true) or "False" (want false).
func (r Report) Is(t string, want bool) bool {
	c, ok := r.Condition(t)
	return ok && c.Status == statusOf(want)
}

func statusOf(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// adapterName is what an adapter may be called: it is a path segment.
var adapterName = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$`)

// PutParams is a report as an adapter sends it.
type PutParams struct {
	Project string
	OrderID string
	Adapter string
	// ObservedGeneration and ObservedTime are pointers so that a missing
	// one is told apart from a zero one.
	ObservedGeneration *int64          `json:"observed_generation"`
	ObservedTime       *time.Time      `json:"observed_time"`
	Conditions         []Condition     `json:"conditions"`
	Data               json.RawMessage `json:"data"`
}

// validate checks what can be checked without the order, naming each
// field at fault.
func (p PutParams) validate() error {
	var errs invalid.Errors
	if !adapterName.MatchString(p.Adapter) {
		errs.Add("adapter", "must be 1 to 63 lower-case letters, digits, '.' or '-', starting and ending with a letter or digit")
	}
	switch {
	case p.ObservedGeneration == nil:
		errs.Add("observed_generation", "is required")
	case *p.ObservedGeneration < 1:
		errs.Add("observed_generation", "must be at least 1")
	}
	if p.ObservedTime == nil || p.ObservedTime.IsZero() {
		errs.Add("observed_time", "is required")
	}
	seen := map[string]bool{}
	for i, c := range p.Conditions {
		field := "conditions[" + strconv.Itoa(i) + "]"
		switch {
		case c.Type == "":
			errs.Add(field+".type", "is required")
		case seen[c.Type]:
			errs.Add(field+".type", "%q is given twice", c.Type)
		}
		seen[c.Type] = true
		if c.Status != "True" && c.Status != "False" && c.Status != "Unknown" {
			errs.Add(field+".status", `must be "True", "False" or "Unknown"`)
		}
	}
	for _, t := range []string{Applied, Available, Health} {
		if !seen[t] {
			errs.Add("conditions", "the %s condition is required", t)
		}
	}
	if len(p.Data) > 0 && !isObject(p.Data) {
		errs.Add("data", "must be an object")
	}
	return errs.Err()
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}
