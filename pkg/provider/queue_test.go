package provider_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/pkg/provider"
)

// countingReporter counts the failed attempts of the reporter it wraps.
type countingReporter struct {
	next     provider.StatusReporter
	failures atomic.Int64
}

func (c *countingReporter) Report(ctx context.Context, r provider.StatusReport) error {
	err := c.next.Report(ctx, r)
	if err != nil {
		c.failures.Add(1)
	}
	return err
}

// newQueueTo returns a queue reporting over HTTP to the Steward at urls,
// retrying every few milliseconds, closed at the end of the test.
func newQueueTo(t *testing.T, urls ...string) (*provider.ReportQueue, *countingReporter) {
	t.Helper()
	rep := &countingReporter{next: &provider.HTTPReporter{StewardURLs: urls, Retry: provider.RetryPolicy{MaxAttempts: 1}}}
	q := provider.NewReportQueue(provider.ReportQueueConfig{
		Reporter: rep, Retry: provider.RetryPolicy{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond},
	})
	t.Cleanup(func() { _ = q.Close(context.Background()) })
	return q, rep
}

func TestReportQueue_DeliversOnceStewardIsBack(t *testing.T) {
	t.Parallel()
	addr := downAddr(t)
	q, rep := newQueueTo(t, "http://"+addr)
	if err := q.Report(t.Context(), provider.StatusReport{InstanceID: "i-1", Status: provider.StatusRunning, ObservedTime: observed}); err != nil {
		t.Fatalf("Report: %v", err)
	}
	poll.Until(t, "several attempts failed while Steward is down", func() bool { return rep.failures.Load() >= 3 })

	steward := newFakeStewardAt(t, addr, step{status: 204})
	poll.Until(t, "the report is delivered once Steward is back", func() bool { return len(steward.received()) >= 1 })
	if err := q.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	got := steward.received()
	if len(got) != 1 || got[0].path != "/api/v1/service-type-instances/i-1/status" || !strings.Contains(got[0].body, `"RUNNING"`) {
		t.Errorf("received %+v, want one RUNNING report of i-1", got)
	}
	if n := q.Pending(); n != 0 {
		t.Errorf("Pending = %d after delivery, want 0", n)
	}
}

func TestReportQueue_NewerReportSupersedesAnUndeliveredOne(t *testing.T) {
	t.Parallel()
	addr := downAddr(t)
	q, rep := newQueueTo(t, "http://"+addr)
	older := provider.StatusReport{InstanceID: "i-1", Status: provider.StatusProvisioning, ObservedTime: observed}
	if err := q.Report(t.Context(), older); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the older report failed", func() bool { return rep.failures.Load() >= 1 })
	newer := provider.StatusReport{InstanceID: "i-1", Status: provider.StatusRunning, Message: "newer", ObservedTime: observed.Add(time.Second)}
	if err := q.Report(t.Context(), newer); err != nil {
		t.Fatal(err)
	}
	// A report observed before the one waiting changes nothing.
	if err := q.Report(t.Context(), provider.StatusReport{InstanceID: "i-1", Status: provider.StatusFailed, ObservedTime: observed}); err != nil {
		t.Fatal(err)
	}
	// Another instance's report is kept beside it.
	if err := q.Report(t.Context(), provider.StatusReport{InstanceID: "i-2", Status: provider.StatusRunning, ObservedTime: observed}); err != nil {
		t.Fatal(err)
	}
	if n := q.Pending(); n != 2 {
		t.Errorf("Pending = %d, want 2 (one report per instance)", n)
	}
	failed := rep.failures.Load()
	poll.Until(t, "the newer report failed too", func() bool { return rep.failures.Load() >= failed+2 })

	steward := newFakeStewardAt(t, addr, step{status: 204})
	poll.Until(t, "both instances' reports are delivered", func() bool { return len(steward.received()) >= 2 })
	if err := q.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	var bodies []string
	for _, r := range steward.received() {
		if strings.HasSuffix(r.path, "/i-1/status") {
			bodies = append(bodies, r.body)
		}
	}
	if len(bodies) != 1 || !strings.Contains(bodies[0], `"message":"newer"`) {
		t.Errorf("i-1's reports received: %q, want only the newer one", bodies)
	}
}

func TestReportQueue_GivesUpOnlyOnARefusal(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t, step{status: 503}, step{status: 408}, step{status: 429}, step{status: 404})
	q, _ := newQueueTo(t, steward.url)
	if err := q.Report(t.Context(), provider.StatusReport{InstanceID: "gone", Status: provider.StatusRunning, ObservedTime: observed}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the report is given up", func() bool { return q.Pending() == 0 })
	if n := len(steward.received()); n != 4 {
		t.Errorf("%d attempts, want 4: 503, 408 and 429 are retried, 404 is final", n)
	}
}

func TestReportQueue_CloseIsBounded(t *testing.T) {
	t.Parallel()
	q, _ := newQueueTo(t, "http://"+downAddr(t))
	if err := q.Report(t.Context(), provider.StatusReport{InstanceID: "i-1", Status: provider.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := q.Close(ctx); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 status reports not delivered") {
		t.Errorf("Close: err = %v, want one report not delivered, DeadlineExceeded", err)
	}
	if err := q.Report(t.Context(), provider.StatusReport{InstanceID: "i-1", Status: provider.StatusRunning}); !errors.Is(err, provider.ErrQueueClosed) {
		t.Errorf("Report after Close: err = %v, want ErrQueueClosed", err)
	}
}

// hostCounter counts the requests sent to each host, refused or not.
type hostCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (h *hostCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	if h.calls == nil {
		h.calls = map[string]int{}
	}
	h.calls[r.URL.Host]++
	h.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (h *hostCounter) of(host string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[host]
}

func TestHTTPReporter_FailsOverToTheNextURL(t *testing.T) {
	t.Parallel()
	down := downAddr(t)
	steward := newFakeSteward(t, step{status: 204})
	hosts := &hostCounter{}
	rep := &provider.HTTPReporter{StewardURL: "http://" + down, StewardURLs: []string{steward.url},
		HTTPClient: &http.Client{Transport: hosts}, Retry: provider.RetryPolicy{MaxAttempts: 1}}
	for range 2 {
		if err := rep.Report(t.Context(), provider.StatusReport{InstanceID: "i-1", Status: provider.StatusRunning}); err != nil {
			t.Fatalf("Report: %v", err)
		}
	}
	if n := len(steward.received()); n != 2 {
		t.Errorf("the second URL got %d reports, want 2", n)
	}
	if n := hosts.of(down); n != 1 {
		t.Errorf("the refusing URL was called %d times, want 1: the URL that answered is kept", n)
	}
}

func TestRegistrar_FailsOverToTheNextURL(t *testing.T) {
	t.Parallel()
	steward := newFakeSteward(t, step{status: 201, body: `{"id":"p-1","name":"sp"}`})
	r, err := provider.NewRegistrar(provider.RegistrarConfig{
		StewardURLs:  []string{"http://" + downAddr(t), steward.url},
		Registration: provider.Registration{Name: "sp", Endpoint: "http://127.0.0.1:1", ServiceTypes: []string{"container"}},
		Retry:        provider.RetryPolicy{MaxAttempts: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Register(t.Context())
	if err != nil || got.ID != "p-1" {
		t.Fatalf("Register = %+v, %v; want p-1 through the second URL", got, err)
	}
}
