package processprovider

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/pkg/provider"
)

var errUnreachable = errors.New("steward unreachable")

// flakyReporter fails each report whose status is in failing, counting the
// attempts per status, and records the rest on delivered.
type flakyReporter struct {
	delivered chan provider.StatusReport

	mu       sync.Mutex
	attempts map[provider.Status]int
	// failing maps a status to how many of its attempts fail; -1 for all.
	failing map[provider.Status]int
}

func newFlakyReporter(failing map[provider.Status]int) *flakyReporter {
	return &flakyReporter{
		delivered: make(chan provider.StatusReport, 100),
		attempts:  map[provider.Status]int{},
		failing:   failing,
	}
}

func (f *flakyReporter) Report(_ context.Context, r provider.StatusReport) error {
	f.mu.Lock()
	f.attempts[r.Status]++
	n, fail := f.attempts[r.Status], f.failing[r.Status]
	f.mu.Unlock()
	if fail < 0 || n <= fail {
		return errUnreachable
	}
	f.delivered <- r
	return nil
}

func (f *flakyReporter) attemptsOf(s provider.Status) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts[s]
}

func noOpWith(tb testing.TB, r Reporter, mutate func(*Config)) *bundle {
	tb.Helper()
	return setup(tb, func(c *Config) {
		c.NoOp, c.WorkDir, c.Reporter = true, "", r
		if mutate != nil {
			mutate(c)
		}
	})
}

func TestReport_RetriedUntilDelivered(t *testing.T) {
	t.Parallel()
	rep := newFlakyReporter(map[provider.Status]int{provider.StatusRunning: 2})
	b := noOpWith(t, rep, nil)
	b.mustCreate(t, "retried", `{}`)

	timer := time.NewTimer(waitFor)
	defer timer.Stop()
	select {
	case r := <-rep.delivered:
		want := provider.StatusReport{InstanceID: "retried", Status: provider.StatusRunning, Message: "no-op: nothing started", ObservedTime: testNow,
			RestartCount: new(int64)}
		if diff := cmp.Diff(want, r); diff != "" {
			t.Errorf("delivered report (-want +got):\n%s", diff)
		}
	case <-timer.C:
		t.Fatal("report not delivered")
	}
	if got := rep.attemptsOf(provider.StatusRunning); got != 3 {
		t.Errorf("attempts = %d, want 3 (two failures, then success)", got)
	}
}

// Issue 22, item 1: by default a report is never dropped while Steward is
// away (the provider used to give up after 5 attempts), and given up
// only when Steward refuses it for good.
func TestReport_NotDroppedWhileStewardIsAway(t *testing.T) {
	t.Parallel()
	rep := newFlakyReporter(map[provider.Status]int{provider.StatusRunning: 12})
	b := noOpWith(t, rep, func(c *Config) { c.ReportBackoffMax = 4 * time.Millisecond })
	b.mustCreate(t, "kept", `{}`)
	timer := time.NewTimer(waitFor)
	defer timer.Stop()
	select {
	case r := <-rep.delivered:
		if r.Status != provider.StatusRunning {
			t.Errorf("delivered %+v, want RUNNING", r)
		}
	case <-timer.C:
		t.Fatalf("report not delivered after %d attempts", rep.attemptsOf(provider.StatusRunning))
	}
	if got := rep.attemptsOf(provider.StatusRunning); got != 13 {
		t.Errorf("attempts = %d, want 13 (twelve failures, then success)", got)
	}
}

func TestReport_RefusedReportIsNotRetried(t *testing.T) {
	t.Parallel()
	var attempts sync.WaitGroup
	attempts.Add(1)
	var n int
	var mu sync.Mutex
	rep := ReporterFunc(func(context.Context, provider.StatusReport) error {
		mu.Lock()
		defer mu.Unlock()
		if n++; n == 1 {
			attempts.Done()
		}
		return &provider.ResponseError{StatusCode: 404}
	})
	b := noOpWith(t, rep, nil)
	b.mustCreate(t, "refused", `{}`)
	attempts.Wait()
	// Stop waits for every sender: a retry would have been made by then
	// (ReportBackoff is 1ms in tests).
	if err := b.p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n != 1 {
		t.Errorf("attempts = %d, want 1: a 404 is final", n)
	}
}

func TestReport_DroppedAfterReportAttempts(t *testing.T) {
	t.Parallel()
	rep := newFlakyReporter(map[provider.Status]int{provider.StatusRunning: -1})
	b := noOpWith(t, rep, func(c *Config) { c.ReportAttempts = 3 })
	b.mustCreate(t, "dropped", `{}`)

	poll.UntilWithin(t, waitFor, "three attempts were made", func() bool { return rep.attemptsOf(provider.StatusRunning) >= 3 })
	// Stop waits for every sender, so the count is final after it.
	if err := b.p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rep.attemptsOf(provider.StatusRunning); got != 3 {
		t.Errorf("attempts = %d, want ReportAttempts = 3", got)
	}
}

func TestReport_SupersededReportIsNotRetried(t *testing.T) {
	t.Parallel()
	// The first RUNNING attempt is held until the instance is deleted, then
	// fails; with DELETED queued behind it, it is not tried again.
	release := make(chan struct{})
	held := make(chan struct{})
	var once sync.Once
	delivered := make(chan provider.StatusReport, 10)
	var mu sync.Mutex
	attempts := map[provider.Status]int{}
	rep := ReporterFunc(func(ctx context.Context, r provider.StatusReport) error {
		mu.Lock()
		attempts[r.Status]++
		mu.Unlock()
		if r.Status == provider.StatusRunning {
			once.Do(func() { close(held) })
			<-release
			return errUnreachable
		}
		delivered <- r
		return nil
	})
	b := noOpWith(t, rep, func(c *Config) { c.ReportBackoff = time.Hour })
	b.mustCreate(t, "superseded", `{}`) // returns although the reporter is held
	<-held
	if _, err := b.p.Delete(context.Background(), "superseded"); err != nil {
		t.Fatal(err)
	}
	close(release)

	timer := time.NewTimer(waitFor)
	defer timer.Stop()
	select {
	case r := <-delivered:
		if r.Status != provider.StatusDeleted {
			t.Errorf("delivered %+v, want DELETED", r)
		}
	case <-timer.C:
		t.Fatal("DELETED not delivered: the superseded report was retried (backoff 1h)")
	}
	mu.Lock()
	defer mu.Unlock()
	if attempts[provider.StatusRunning] != 1 {
		t.Errorf("RUNNING attempts = %d, want 1", attempts[provider.StatusRunning])
	}
}

func TestStop_AbandonsReportRetriesWhenCtxEnds(t *testing.T) {
	t.Parallel()
	rep := newFlakyReporter(map[provider.Status]int{provider.StatusRunning: -1})
	b := noOpWith(t, rep, func(c *Config) { c.ReportBackoff = time.Hour })
	b.mustCreate(t, "abandoned", `{}`)
	poll.UntilWithin(t, waitFor, "a first attempt was made", func() bool { return rep.attemptsOf(provider.StatusRunning) >= 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := b.p.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop: err = %v, want DeadlineExceeded", err)
	}
	if got := rep.attemptsOf(provider.StatusRunning); got != 1 {
		t.Errorf("attempts = %d, want 1", got)
	}
}
