package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/pkg/provider"
)

var observed = time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)

func newHTTPReporter(steward *fakeSteward, s *sleeps) *provider.HTTPReporter {
	return &provider.HTTPReporter{StewardURL: steward.url, Token: "s3cret", Retry: provider.RetryPolicy{SleepFunc: s.sleep}}
}

func TestHTTPReporter_PutsTheStatus(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t, step{status: 204})
	err := newHTTPReporter(steward, &sleeps{}).Report(t.Context(), provider.StatusReport{
		InstanceID: "08aa-1", Status: provider.StatusRunning, Message: "booted", ObservedTime: observed,
	})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	reqs := steward.received()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	want := stewardRequest{
		method: "PUT", path: "/api/v1/service-type-instances/08aa-1/status", auth: "Bearer s3cret", contentType: "application/json",
		body: `{"status":"RUNNING","message":"booted","observed_time":"2026-03-01T12:30:00Z"}`,
	}
	if diff := cmp.Diff(want, reqs[0], cmp.AllowUnexported(stewardRequest{})); diff != "" {
		t.Errorf("request: -want +got:\n%s", diff)
	}
}

func TestHTTPReporter_Answers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		script       []step
		wantErr      error
		wantStatus   int // of the ResponseError, when one is wanted
		wantAttempts int
		reason       string
	}{
		{name: "OK", script: []step{{status: 200}}, wantAttempts: 1, reason: "200 is success"},
		{name: "UnknownInstance", script: []step{{status: 404}}, wantErr: provider.ErrUnknownInstance, wantStatus: 404, wantAttempts: 1,
			reason: "404 means Steward holds no such instance; retrying cannot help"},
		{name: "RetriesUnavailable", script: []step{{status: 503}, {hangUp: true}, {status: 429}, {status: 204}}, wantAttempts: 4,
			reason: "5xx, network errors and 429 are retried"},
		{name: "GivesUpAfterMaxAttempts", script: []step{{status: 500}}, wantStatus: 500, wantAttempts: 5,
			reason: "5 attempts by default"},
		{name: "RefusalIsFinal", script: []step{{status: 400, body: `{"status":400,"reason":"INVALID_ARGUMENT"}`}}, wantStatus: 400, wantAttempts: 1,
			reason: "a 4xx is not retried"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			steward := newFakeSteward(t, tc.script...)
			err := newHTTPReporter(steward, &sleeps{}).Report(t.Context(),
				provider.StatusReport{InstanceID: "i-1", Status: provider.StatusFailed, ObservedTime: observed})
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("%s\nerr = %v, want %v", tc.reason, err, tc.wantErr)
			}
			var re *provider.ResponseError
			if got := errors.As(err, &re); got != (tc.wantStatus != 0) || (got && re.StatusCode != tc.wantStatus) {
				t.Errorf("%s\nerr = %v, want a ResponseError with status %d", tc.reason, err, tc.wantStatus)
			}
			if tc.wantErr == nil && tc.wantStatus == 0 && err != nil {
				t.Errorf("%s\nerr = %v", tc.reason, err)
			}
			if n := len(steward.received()); n != tc.wantAttempts {
				t.Errorf("%s\n%d attempts, want %d", tc.reason, n, tc.wantAttempts)
			}
		})
	}
}

func TestHTTPReporter_FillsObservedTime(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t, step{status: 204})
	before := time.Now()
	if err := newHTTPReporter(steward, &sleeps{}).Report(t.Context(), provider.StatusReport{InstanceID: "i-1", Status: provider.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	var body struct {
		ObservedTime time.Time `json:"observed_time"`
	}
	if err := json.Unmarshal([]byte(steward.received()[0].body), &body); err != nil {
		t.Fatal(err)
	}
	if body.ObservedTime.Before(before.Truncate(time.Second)) || body.ObservedTime.Location() != time.UTC {
		t.Errorf("observed_time = %v, want now in UTC", body.ObservedTime)
	}
}

// A message longer than Steward takes is cut, not sent to be refused with
// the whole report (issue 45, finding 8).
func TestHTTPReporter_CutsALongMessage(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t, step{status: 204})
	long := strings.Repeat("é", provider.MaxMessageLen+100)
	if err := newHTTPReporter(steward, &sleeps{}).Report(t.Context(), provider.StatusReport{InstanceID: "i-1",
		Status: provider.StatusFailed, Message: long, ObservedTime: observed}); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(steward.received()[0].body), &body); err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(body.Message); n != provider.MaxMessageLen || !strings.HasSuffix(body.Message, "é…") {
		t.Errorf("message sent has %d characters, ending %q; want %d, cut with an ellipsis", n, body.Message[len(body.Message)-8:], provider.MaxMessageLen)
	}
}

// A repair report's and a runtime report's messages are cut alike, the
// report passed in left as it was.
func TestHTTPReporter_CutsLongRepairAndRuntimeMessages(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t, step{status: 200}, step{status: 200})
	h := newHTTPReporter(steward, &sleeps{})
	long := strings.Repeat("m", provider.MaxMessageLen+1)
	rr := provider.RepairReport{Status: provider.RepairFailed,
		Steps:        []provider.RepairStep{{Name: provider.StepPrecheck, Status: provider.RepairFailed, Message: long}},
		Error:        &provider.RepairError{Code: "X", Message: long},
		RuntimeState: &provider.RuntimeState{Health: "failed", Members: []provider.Member{{ID: "m", Role: "server", Health: "failed", Message: long}}}}
	req := provider.RepairRequest{InstanceID: "i-1", OperationID: "op-1", ReportPath: "/api/v1/x/report", Token: "op"}
	if err := h.ReportRepair(t.Context(), req, rr); err != nil {
		t.Fatal(err)
	}
	if err := h.ReportRuntime(t.Context(), "p-1", "a-1", provider.RuntimeReport{RuntimeState: *rr.RuntimeState, ObservedTime: observed}); err != nil {
		t.Fatal(err)
	}
	for i, r := range steward.received() {
		if strings.Contains(r.body, long) || !strings.Contains(r.body, strings.Repeat("m", provider.MaxMessageLen-1)+"…") {
			t.Errorf("request %d sent a message not cut to %d characters", i, provider.MaxMessageLen)
		}
	}
	if rr.Steps[0].Message != long || rr.Error.Message != long || rr.RuntimeState.Members[0].Message != long {
		t.Error("the reporter changed the report it was given")
	}
}

func TestReporters_RefuseInvalidReports(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t, step{status: 204})
	pub := &recordingPublisher{}
	reporters := map[string]provider.StatusReporter{
		"HTTP": newHTTPReporter(steward, &sleeps{}),
		"NATS": &provider.NATSReporter{Publisher: pub, Source: "/providers/kv", ServiceType: "vm"},
	}
	reports := map[string]provider.StatusReport{
		"NoInstanceID":  {Status: provider.StatusRunning},
		"UnknownStatus": {InstanceID: "i-1", Status: "SPINNING"},
		"EmptyStatus":   {InstanceID: "i-1"},
	}
	for rname, r := range reporters {
		for name, report := range reports {
			if err := r.Report(t.Context(), report); !errors.Is(err, provider.ErrInvalidReport) {
				t.Errorf("%s %s: err = %v, want ErrInvalidReport", rname, name, err)
			}
		}
	}
	if len(steward.received()) != 0 || len(pub.published()) != 0 {
		t.Error("an invalid report was sent")
	}
}

func TestReportFunc(t *testing.T) {
	t.Parallel()
	var got provider.StatusReport
	var r provider.StatusReporter = provider.ReportFunc(func(_ context.Context, sr provider.StatusReport) error {
		got = sr
		return nil
	})
	want := provider.StatusReport{InstanceID: "i-1", Status: provider.StatusRunning}
	if err := r.Report(t.Context(), want); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReportFunc got %+v, %v", got, err)
	}
}
