package adapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
	"unicode/utf8"
)

// Condition types of a report (API.md "Adapter status").
const (
	ConditionApplied   = "Applied"
	ConditionAvailable = "Available"
	ConditionHealth    = "Health"
	ConditionFinalized = "Finalized"
)

// Condition statuses.
const (
	StatusTrue    = "True"
	StatusFalse   = "False"
	StatusUnknown = "Unknown"
)

// Reasons of the default conditions; the package doc's decision matrix
// says when each is used.
const (
	ReasonAppliedSuccessfully   = "AppliedSuccessfully"
	ReasonResourcesCreated      = "ResourcesCreated"
	ReasonHealthy               = "Healthy"
	ReasonPreconditionsNotMet   = "PreconditionsNotMet"
	ReasonApplyFailed           = "ApplyFailed"
	ReasonDeletionInProgress    = "DeletionInProgress"
	ReasonDeleting              = "Deleting"
	ReasonDeleted               = "Deleted"
	ReasonInvalidDeletionOrder  = "InvalidDeletionOrder"
	ReasonInvalidDeletionConfig = "InvalidDeletionConfig"
	ReasonDeletionFailed        = "DeletionFailed"
	ReasonExecutionFailed       = "ExecutionFailed"
)

// Report is an adapter's status report on an order, in the JSON of
// PUT /api/v1/catalog-item-instances/{id}/adapter-statuses/{adapter}.
type Report struct {
	ObservedGeneration int64       `json:"observed_generation"`
	ObservedTime       time.Time   `json:"observed_time"`
	Conditions         []Condition `json:"conditions"`
	// Data is a JSON object, {} when post declares no data.
	Data json.RawMessage `json:"data"`
}

// Condition is one condition of a report.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Condition returns the report's condition of type t, and whether it has one.
func (r *Report) Condition(t string) (Condition, bool) {
	for _, c := range r.Conditions {
		if c.Type == t {
			return c, true
		}
	}
	return Condition{}, false
}

// ReportPath is where the adapter named adapter reports on order orderID.
func ReportPath(orderID, adapter string) string {
	return "/api/v1/catalog-item-instances/" + url.PathEscape(orderID) + "/adapter-statuses/" + url.PathEscape(adapter)
}

// PutReport sends o.Report to the Steward API through the executor's
// [API]. It does nothing when o.Report is nil (the order is gone, or the
// outcome is to be retried). The API's answers 200 (stored), 204 (stale,
// discarded: a newer report or generation won) and 404 (the order is
// gone) all mean there is nothing more to do, and return nil. An answer
// that may change on retry (no answer, 5xx, 429) returns an error
// satisfying errors.Is(err, [ErrTransient]); any other is a terminal error.
// PutReport is idempotent: the server keeps the latest report.
func (e *Executor) PutReport(ctx context.Context, o Outcome) error {
	if o.Report == nil {
		return nil
	}
	body, err := json.Marshal(cutReport(*o.Report))
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	path := ReportPath(o.OrderID, e.cfg.Adapter.Name)
	status, resp, err := e.deps.API.Do(ctx, http.MethodPut, path, body)
	switch {
	case err != nil:
		return Transient(fmt.Errorf("put report %s: %w", path, err))
	case status == http.StatusOK, status == http.StatusNoContent, status == http.StatusNotFound:
		return nil
	case status == http.StatusTooManyRequests, status >= 500:
		return Transient(fmt.Errorf("put report %s: status %d: %s", path, status, snippet(resp)))
	case status >= 200 && status < 300:
		return nil
	}
	return fmt.Errorf("put report %s: status %d: %s", path, status, snippet(resp))
}

// The longest condition reason and message Steward takes, in characters
// (api/openapi.yaml, AdapterCondition): a longer one would have the whole
// report refused, and a 4xx is not retried.
const (
	maxConditionReason  = 2048
	maxConditionMessage = 4096
)

// cutReport is r with each condition's reason and message cut to what
// Steward takes: a message is often an error's text, of any length.
func cutReport(r Report) Report {
	conds := make([]Condition, len(r.Conditions))
	for i, c := range r.Conditions {
		c.Reason, c.Message = cutText(c.Reason, maxConditionReason), cutText(c.Message, maxConditionMessage)
		conds[i] = c
	}
	if r.Conditions != nil {
		r.Conditions = conds
	}
	return r
}

// cutText cuts s to max characters, the last an ellipsis.
func cutText(s string, max int) string {
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

// snippet shortens a response body for an error message.
func snippet(b []byte) string {
	const limit = 300
	if len(b) > limit {
		return string(b[:limit]) + "…"
	}
	return string(b)
}
