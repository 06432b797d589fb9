package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Problem is an RFC 9457 problem detail with Steward's stable `reason`.
type Problem struct {
	Type     string
	Title    string
	Status   int
	Detail   string
	Instance string
	Reason   string
	// Extra members carry the values named in Detail (API.md, Conventions).
	Extra map[string]any
}

// MarshalJSON flattens Extra beside the standard members. An empty
// Instance is left out (it is optional, and "" identifies nothing).
func (p Problem) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(p.Extra)+6)
	for k, v := range p.Extra {
		m[k] = v
	}
	m["type"] = p.Type
	m["title"] = p.Title
	m["status"] = p.Status
	m["detail"] = p.Detail
	if p.Instance != "" {
		m["instance"] = p.Instance
	} else {
		delete(m, "instance") // nor may Extra supply one
	}
	m["reason"] = p.Reason
	return json.Marshal(m)
}

// Mapping turns errors into one kind of problem. Exactly one of Err (matched
// with errors.Is) and Match (for error types, usually via errors.As) is set.
type Mapping struct {
	Err    error
	Match  func(error) bool
	Status int
	Reason string
	Title  string
	// IDParam, for a "… not found" Err, is the path parameter that names
	// what was not found: a detail that is Err's bare text then names it
	// (order "x" not found).
	IDParam string
}

// Problems is the ordered error table; the first mapping that matches wins.
type Problems []Mapping

// ProblemFielder is implemented by errors that add members to their problem
// (a provider's status and body, the invalid fields).
type ProblemFielder interface {
	ProblemFields() map[string]any
}

// internalMapping answers every error the table does not know: its text is
// hidden from the client (it may hold SQL or addresses) and logged instead.
var internalMapping = Mapping{Status: http.StatusInternalServerError, Reason: "INTERNAL", Title: "Internal error"}

// Lookup finds the mapping for err; ok is false when only INTERNAL fits.
func (ps Problems) Lookup(err error) (m Mapping, ok bool) {
	for _, m := range ps {
		if (m.Err != nil && errors.Is(err, m.Err)) || (m.Match != nil && m.Match(err)) {
			return m, true
		}
	}
	return internalMapping, false
}

// problemFor builds the problem for err as the table says.
func (ps Problems) problemFor(err error, requestID string, pathValue func(string) string) (Problem, bool) {
	m, ok := ps.Lookup(err)
	p := Problem{
		Type:     "https://steward.dev/problems/" + strings.ToLower(strings.ReplaceAll(m.Reason, "_", "-")),
		Title:    m.Title,
		Status:   m.Status,
		Reason:   m.Reason,
		Instance: "urn:steward:request:" + requestID,
	}
	if ok {
		p.Detail = err.Error()
		if m.IDParam != "" && m.Err != nil && pathValue != nil {
			p.Detail = namedNotFound(p.Detail, m.Err.Error(), pathValue(m.IDParam))
		}
		// An error may carry its own status (a provider's refusal is
		// forwarded with the provider's status); the reason stays the table's.
		var hs interface{ HTTPStatus() int }
		if errors.As(err, &hs) {
			if code := hs.HTTPStatus(); code >= 400 && code <= 599 {
				p.Status = code
			}
		}
		var f ProblemFielder
		if errors.As(err, &f) {
			p.Extra = f.ProblemFields()
		}
	} else {
		p.Detail = "The server met an unexpected error; it has been logged with the request id."
	}
	return p, ok
}

// writeProblem writes p as application/problem+json.
func writeProblem(w http.ResponseWriter, p Problem) {
	b, err := json.Marshal(p)
	if err != nil {
		b = []byte(`{"status":500,"reason":"INTERNAL","title":"Internal error"}`)
		p.Status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(b, '\n'))
}

// Render returns err's problem as JSON without a request (for an
// Operation's `error`). It has no `instance`: there is no request to name,
// and internal/operations sets the operation's own
// (urn:steward:operation:<id>).
func (ps Problems) Render(err error) json.RawMessage {
	p, _ := ps.problemFor(err, "", nil)
	p.Instance = ""
	b, _ := json.Marshal(p)
	return b
}

// namedNotFound is a not-found detail that names the id: the bare
// sentinel ("order not found"), the sentinel and the id ("app instance not
// found: x") or the sentinel after the noun and id (`lifecycle "x":
// lifecycle not found`) becomes `order "x" not found`.
// Any other detail says more, and is kept.
func namedNotFound(detail, sentinel, id string) string {
	noun, ok := strings.CutSuffix(sentinel, " not found")
	if !ok || id == "" {
		return detail
	}
	if detail == sentinel || detail == sentinel+": "+id || detail == fmt.Sprintf("%s %q: %s", noun, id, sentinel) {
		return fmt.Sprintf("%s %q not found", noun, id)
	}
	return detail
}
