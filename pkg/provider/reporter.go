package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// StatusReporter sends a provider's status reports to Steward. Report
// blocks until the report is handed over or fails, within ctx. Reporting the
// same report twice is harmless: Steward ignores a report whose
// ObservedTime is older than the last one it applied.
type StatusReporter interface {
	Report(ctx context.Context, r StatusReport) error
}

// ReportFunc adapts a function to a [StatusReporter].
type ReportFunc func(ctx context.Context, r StatusReport) error

// Report calls f.
func (f ReportFunc) Report(ctx context.Context, r StatusReport) error { return f(ctx, r) }

// HTTPReporter reports status to Steward over HTTP: PUT
// {StewardURL}/api/v1/service-type-instances/{instance_id}/status with
// {"status","message","observed_time"}. It calls Steward through its typed
// client, package github.com/stewardhq/steward/pkg/client. Set StewardURL
// or StewardURLs; the other fields are optional. It is safe for concurrent
// use; its fields must not change once it is in use, and it must not be
// copied then.
//
// Report blocks and gives up after its attempts; a provider that must not
// lose a report puts a [ReportQueue] in front of it.
type HTTPReporter struct {
	// StewardURL is Steward's base URL, such as "http://127.0.0.1:8080".
	StewardURL string
	// StewardURLs are more base URLs of the same Steward (its replicas),
	// tried after StewardURL. A call goes to the URL that answered last and
	// moves on to the next when it cannot connect (refused, reset, DNS).
	StewardURLs []string
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token string
	// HTTPClient sends the calls. Defaults to a client on a clone of
	// http.DefaultTransport that keeps up to 256 idle connections per host; redirects are never followed.
	HTTPClient *http.Client
	// Timeout bounds each attempt. Defaults to 10s.
	Timeout time.Duration
	// Retry says how attempts are repeated. Defaults: 5 attempts, waits
	// from 200ms to 5s. An attempt tries every URL that cannot connect
	// before it fails.
	Retry RetryPolicy

	// current is the index of the URL that answered last.
	current atomic.Int32
}

// Report sends r, retrying network errors, timeouts, 5xx and 429 as
// [HTTPReporter.Retry] says. Any 2xx (204 included: Steward found it stale)
// is success. A zero r.ObservedTime is set to now.
//
// It returns an error wrapping [ErrInvalidReport] when r has no instance id
// (or "." or "..", which cannot stand in the path) or an unknown status,
// [ErrUnknownInstance] when Steward answers 404, a [*ResponseError] for
// another non-2xx answer, and [ErrTimeout] or [ErrUnreachable] when the
// last attempt failed so; when ctx ends during a wait, the error wraps
// ctx's error as well.
func (h *HTTPReporter) Report(ctx context.Context, r StatusReport) error {
	r, err := checkReport(r)
	if err != nil {
		return err
	}
	if !pathSegment(r.InstanceID) {
		return fmt.Errorf("%w: instance_id %q", ErrInvalidReport, r.InstanceID)
	}
	api, err := h.api(h.Token)
	if err != nil {
		return fmt.Errorf("report status of %q: %w", r.InstanceID, err)
	}
	body := r
	body.InstanceID = "" // it is in the path (API.md)
	err = h.send(ctx, body, func(ctx context.Context, b []byte) (answer, error) {
		return api.call(ctx, func(s stewardAPI) (answer, error) { return s.reportStatus(ctx, r.InstanceID, b) })
	})
	if err != nil {
		return fmt.Errorf("report status %s of %q: %w", r.Status, r.InstanceID, err)
	}
	return nil
}

// checkReport refuses a report Steward would refuse, sets a zero
// ObservedTime to now, in UTC as API.md wants times, and cuts a Message
// longer than [MaxMessageLen] (Steward would refuse the whole report for
// it, and a provider's message is often an error's text, of any length;
// ReportRepair and ReportRuntime cut theirs alike).
func checkReport(r StatusReport) (StatusReport, error) {
	if r.InstanceID == "" {
		return r, fmt.Errorf("%w: instance_id is required", ErrInvalidReport)
	}
	if !r.Status.Valid() {
		return r, fmt.Errorf("%w: status %q", ErrInvalidReport, r.Status)
	}
	if r.ObservedTime.IsZero() {
		r.ObservedTime = time.Now()
	}
	r.ObservedTime = r.ObservedTime.UTC()
	r.Message = cutMessage(r.Message)
	return r, nil
}

// cutRepairReport is r with its steps', error's and members' messages cut
// as cutMessage cuts them, r's slices left as they are.
func cutRepairReport(r RepairReport) RepairReport {
	if r.Steps != nil {
		steps := make([]RepairStep, len(r.Steps))
		for i, st := range r.Steps {
			st.Message = cutMessage(st.Message)
			steps[i] = st
		}
		r.Steps = steps
	}
	if r.Error != nil {
		e := *r.Error
		e.Message = cutMessage(e.Message)
		r.Error = &e
	}
	if r.RuntimeState != nil {
		rs := cutRuntime(*r.RuntimeState)
		r.RuntimeState = &rs
	}
	return r
}

// cutRuntime is rs with its members' messages cut as cutMessage cuts them.
func cutRuntime(rs RuntimeState) RuntimeState {
	if rs.Members != nil {
		ms := make([]Member, len(rs.Members))
		for i, m := range rs.Members {
			m.Message = cutMessage(m.Message)
			ms[i] = m
		}
		rs.Members = ms
	}
	return rs
}

// cutMessage cuts s to MaxMessageLen characters, the last an ellipsis.
func cutMessage(s string) string {
	if len(s) <= MaxMessageLen || utf8.RuneCountInString(s) <= MaxMessageLen {
		return s
	}
	return string([]rune(s)[:MaxMessageLen-1]) + "…"
}

// ReportRepair posts a worker's report on a repair operation to
// {StewardURL}{req.ReportPath}, authenticated with req.Token (the
// operation's worker token, not h.Token), retrying as Report does. Steward
// merges the report's steps by name; a report that would move a finished
// step back answers 409, a [*ResponseError].
func (h *HTTPReporter) ReportRepair(ctx context.Context, req RepairRequest, r RepairReport) error {
	if req.ReportPath == "" || req.OperationID == "" {
		return fmt.Errorf("%w: the repair request has no report path", ErrInvalidReport)
	}
	api, err := h.api(req.Token)
	if err != nil {
		return fmt.Errorf("report repair %s: %w", req.OperationID, err)
	}
	r = cutRepairReport(r)
	err = h.send(ctx, r, func(ctx context.Context, b []byte) (answer, error) {
		return api.call(ctx, func(s stewardAPI) (answer, error) { return s.reportRepair(ctx, req.ReportPath, b) })
	})
	if err != nil {
		return fmt.Errorf("report repair %s (%s): %w", req.OperationID, r.Status, err)
	}
	return nil
}

// ReportRuntime reports the runtime of an app instance (the order whose
// instance the provider realises: [CreateMetadata]): PUT
// {StewardURL}/api/v1/projects/{project}/app-instances/{app_instance_id}/runtime.
// A zero ObservedTime is set to now. It returns an error wrapping
// [ErrInvalidReport] when project or appInstanceID is empty (or "." or
// "..", which cannot stand in the path), and otherwise the errors of
// [HTTPReporter.Report].
func (h *HTTPReporter) ReportRuntime(ctx context.Context, project, appInstanceID string, r RuntimeReport) error {
	if project == "" || appInstanceID == "" {
		return fmt.Errorf("%w: project and app instance id are required", ErrInvalidReport)
	}
	if !pathSegment(project) || !pathSegment(appInstanceID) {
		return fmt.Errorf("%w: project %q, app instance id %q", ErrInvalidReport, project, appInstanceID)
	}
	if r.ObservedTime.IsZero() {
		r.ObservedTime = time.Now()
	}
	r.ObservedTime = r.ObservedTime.UTC()
	r.RuntimeState = cutRuntime(r.RuntimeState)
	api, err := h.api(h.Token)
	if err != nil {
		return fmt.Errorf("report runtime of %q: %w", appInstanceID, err)
	}
	err = h.send(ctx, r, func(ctx context.Context, b []byte) (answer, error) {
		return api.call(ctx, func(s stewardAPI) (answer, error) { return s.reportRuntime(ctx, project, appInstanceID, b) })
	})
	if err != nil {
		return fmt.Errorf("report runtime of %q: %w", appInstanceID, err)
	}
	return nil
}

// api returns Steward's replicas as h calls them with token. They are built
// per call (a struct and a parsed URL each): the connections are the
// transport's, shared, the replica that answered last is h's, and
// ReportRepair's token is the operation's.
func (h *HTTPReporter) api(token string) (stewards, error) {
	return newStewards(stewardURLs(h.StewardURL, h.StewardURLs), token, h.HTTPClient, h.Timeout, &h.current)
}

// send encodes body and makes one call, call, with h's retries; 404 wraps
// ErrUnknownInstance.
func (h *HTTPReporter) send(ctx context.Context, body any, call func(ctx context.Context, body []byte) (answer, error)) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	attempt := func(ctx context.Context) error {
		a, err := call(ctx, b)
		switch {
		case err != nil:
			return err
		case a.status == http.StatusNotFound:
			return fmt.Errorf("%w: %w", ErrUnknownInstance, a.responseError())
		case !a.ok():
			return a.responseError()
		}
		return nil
	}
	return h.Retry.withDefaults(5*time.Second, 5).run(ctx, attempt, nil)
}
