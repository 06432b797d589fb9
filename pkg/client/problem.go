package client

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// ProblemError is an error answer of the API (RFC 9457 application/problem+json,
// API.md "Errors"): a stable Reason to branch on, and the members that
// explain it.
type ProblemError struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance"`
	// Reason is the stable UPPER_SNAKE cause (POLICY_NOT_FOUND, …).
	Reason string `json:"reason"`
	// Fields lists, with INVALID_ARGUMENT, each rejected input and why.
	Fields []InvalidField `json:"fields,omitempty"`
	// Members holds every member of the body, the problem-specific ones
	// (policy_id, conflicting_policy_id, …) included.
	Members map[string]any `json:"-"`
}

// InvalidField is one rejected input of an INVALID_ARGUMENT problem.
type InvalidField struct {
	// Field names the input in the request (user_values[2].value).
	Field   string `json:"field"`
	Message string `json:"message"`
	// Path, on a refusal of an order's values, names the location in the
	// spec as the catalog item and its service type do (image,
	// env[0].name); DisplayName is the item field's display name there.
	Path        string `json:"path,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
	// Detail is a second, technical detail (a pattern, cut short).
	Detail string `json:"detail,omitempty"`
}

// Name is how a person is told which input was refused: Path and the
// display name in parentheses ("image (Container image)") where the
// server gave a Path, else Field. The server's detail names fields so
// (internal/invalid's Field.Name, which this public package cannot import).
func (f InvalidField) Name() string {
	switch {
	case f.Path == "":
		return f.Field
	case f.DisplayName == "" || f.DisplayName == f.Path:
		return f.Path
	default:
		return f.Path + " (" + f.DisplayName + ")"
	}
}

// Error is one line: status, reason, and the detail or title.
func (p *ProblemError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", p.Status, p.Reason)
	if p.Detail != "" {
		b.WriteString(": " + p.Detail)
	} else if p.Title != "" {
		b.WriteString(": " + p.Title)
	}
	return b.String()
}

// Check returns nil for a 2xx answer, else a *ProblemError: decoded from the
// body when it is problem+json, built from the status otherwise (a proxy's
// error page, say), so that callers always get one error type.
func Check(rsp *http.Response, body []byte) error {
	if rsp == nil {
		return fmt.Errorf("steward client: no response")
	}
	if rsp.StatusCode >= 200 && rsp.StatusCode < 300 {
		return nil
	}
	p := &ProblemError{Status: rsp.StatusCode, Title: http.StatusText(rsp.StatusCode)}
	decoded := false
	if mt, _, err := mime.ParseMediaType(rsp.Header.Get("Content-Type")); err == nil &&
		(mt == "application/problem+json" || mt == "application/json") && len(body) > 0 {
		decoded = json.Unmarshal(body, p) == nil && json.Unmarshal(body, &p.Members) == nil
		if p.Status == 0 {
			p.Status = rsp.StatusCode
		}
	}
	if p.Reason == "" {
		p.Reason = strings.ToUpper(strings.ReplaceAll(http.StatusText(rsp.StatusCode), " ", "_"))
	}
	if !decoded && len(body) > 0 && len(body) < 512 {
		p.Detail = strings.TrimSpace(string(body)) // a proxy's page, say: shown as it came
	}
	return p
}
