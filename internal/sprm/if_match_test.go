package sprm_test

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// report sends a status report for id observed at `at`; headers are as for Do.
func (e env) report(t *testing.T, id, status string, at time.Time, headers ...string) *apitest.Response {
	t.Helper()
	return e.s.Do(t, "PUT", "/api/v1/service-type-instances/"+id+"/status",
		map[string]any{"status": status, "observed_time": at}, headers...)
}

// deletesOf counts the provider's delete calls for instance id.
func deletesOf(p *providertest.Server, id string) int {
	n := 0
	for _, c := range p.Deletes() {
		if c.InstanceID == id {
			n++
		}
	}
	return n
}

// staleAndCurrent creates id, moves it on with a report (no precondition)
// and returns the etag it was created with, now stale, and its current one.
func (e env) staleAndCurrent(t *testing.T, id string, at time.Time) (stale, current string) {
	t.Helper()
	stale = e.create(t, id).ETag
	e.report(t, id, "RUNNING", at).Want(t, http.StatusOK)
	current = e.instance(t, id).ETag
	if stale == "" || current == stale {
		t.Fatalf("%s: etag %q after create, %q after a report; want two different etags", id, stale, current)
	}
	return stale, current
}

// wantUnchanged fails the test unless id is still RUNNING at etag with no
// deletion queued and no delete sent to the provider.
func (e env) wantUnchanged(t *testing.T, id, etag string) {
	t.Helper()
	got := e.instance(t, id)
	if got.ETag != etag || got.Status != "RUNNING" || got.Deletion != nil || got.DeletedAt != nil {
		t.Fatalf("after a refused write %s = %+v; want it unchanged: RUNNING at %s, no deletion", id, got, etag)
	}
	if n := deletesOf(e.p, id); n != 0 {
		t.Fatalf("after a refused delete the provider saw %d delete(s) of %s, want none", n, id)
	}
}

func TestDelete_HonoursIfMatch(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		now := time.Now().UTC()

		// Deleting now: a stale etag changes nothing and never reaches the
		// provider; the current one deletes.
		stale, current := e.staleAndCurrent(t, "vm-now", now)
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/vm-now", nil, "If-Match", stale).
			WantProblem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
		e.wantUnchanged(t, "vm-now", current)
		var in instance
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/vm-now", nil, "If-Match", current).
			Want(t, http.StatusAccepted).JSON(t, &in)
		if in.Status != "DELETED" || deletesOf(e.p, "vm-now") != 1 {
			t.Fatalf("delete with the current etag: %+v and %d provider delete(s); want DELETED after one", in, deletesOf(e.p, "vm-now"))
		}

		// Deferred: a stale etag queues nothing; the current one queues.
		stale, current = e.staleAndCurrent(t, "vm-later", now)
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/vm-later?deferred=true", nil, "If-Match", stale).
			WantProblem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
		e.wantUnchanged(t, "vm-later", current)
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/vm-later?deferred=true", nil, "If-Match", current).
			Want(t, http.StatusOK).JSON(t, &in)
		if in.Deletion == nil || in.Deletion.CleanupTaskID == "" {
			t.Fatalf("deferred delete with the current etag queued nothing: %+v", in)
		}

		// No If-Match, or "*", is no precondition, as before.
		e.staleAndCurrent(t, "vm-plain", now)
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/vm-plain", nil).Want(t, http.StatusAccepted).JSON(t, &in)
		if in.Status != "DELETED" {
			t.Fatalf("delete without If-Match: %+v, want DELETED", in)
		}
		e.staleAndCurrent(t, "vm-any", now)
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/vm-any?deferred=true", nil, "If-Match", "*").
			Want(t, http.StatusOK).JSON(t, &in)
		if in.Deletion == nil {
			t.Fatalf("deferred delete with If-Match * queued nothing: %+v", in)
		}
	})
}

func TestStatus_HonoursIfMatch(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		now := time.Now().UTC()
		created := e.create(t, "vm-1").ETag

		var in instance
		e.report(t, "vm-1", "RUNNING", now, "If-Match", created).Want(t, http.StatusOK).JSON(t, &in)
		if in.Status != "RUNNING" || in.ETag == created {
			t.Fatalf("report with the current etag: %+v, want RUNNING at a new etag (was %s)", in, created)
		}
		current := in.ETag

		// The etag read before that report is stale: nothing changes, even
		// for a report that is itself out of date (the precondition first).
		e.report(t, "vm-1", "FAILED", now.Add(time.Second), "If-Match", created).
			WantProblem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
		e.report(t, "vm-1", "FAILED", now.Add(-time.Minute), "If-Match", created).
			WantProblem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
		e.wantUnchanged(t, "vm-1", current)

		// The current etag with an old report: ignored as before.
		e.report(t, "vm-1", "FAILED", now.Add(-time.Minute), "If-Match", current).Want(t, http.StatusNoContent)
		e.wantUnchanged(t, "vm-1", current)

		// No If-Match, or "*", is no precondition, as before.
		e.report(t, "vm-1", "FAILED", now.Add(2*time.Second)).Want(t, http.StatusOK).JSON(t, &in)
		if in.Status != "FAILED" || in.ETag == current {
			t.Fatalf("report without If-Match: %+v, want FAILED at a new etag", in)
		}
		e.report(t, "vm-1", "RUNNING", now.Add(3*time.Second), "If-Match", "*").Want(t, http.StatusOK).JSON(t, &in)
		if in.Status != "RUNNING" {
			t.Fatalf("report with If-Match *: %+v, want RUNNING", in)
		}

		e.report(t, "ghost", "RUNNING", now, "If-Match", `"1"`).WantProblem(t, http.StatusNotFound, "INSTANCE_NOT_FOUND")
	})
}

// concurrently runs n calls of f at once and returns their errors.
func concurrently(n int, f func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = f(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// TestIfMatch_OneWriterPerVersion races writers holding the same version:
// the compare and the write are one step, so exactly one gets in.
func TestIfMatch_OneWriterPerVersion(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		svc := e.s.SPRM()
		const writers = 8
		now := time.Now().UTC()

		e.create(t, "reported")
		in, err := svc.Instance(t.Context(), "", "reported", false)
		if err != nil {
			t.Fatal(err)
		}
		version := in.Version
		errs := concurrently(writers, func(i int) error {
			_, err := svc.ApplyStatusIfMatch(t.Context(), "reported", provider.StatusReport{
				Status: provider.StatusRunning, Message: strconv.Itoa(i), ObservedTime: now.Add(time.Duration(i) * time.Millisecond),
			}, &version)
			return err
		})
		if ok, stale := tally(t, errs, store.ErrStale); ok != 1 || stale != writers-1 {
			t.Fatalf("status reports at one version: %d applied, %d stale; want 1 and %d", ok, stale, writers-1)
		}
		if after := e.instance(t, "reported"); after.ETag != `"`+strconv.FormatInt(version+1, 10)+`"` {
			t.Fatalf("after the race the etag is %s, want one write past %d", after.ETag, version)
		}

		e.create(t, "deleted")
		if in, err = svc.Instance(t.Context(), "", "deleted", false); err != nil {
			t.Fatal(err)
		}
		version = in.Version
		errs = concurrently(writers, func(int) error {
			_, err := svc.DeleteIfMatch(t.Context(), "", "deleted", false, &version)
			return err
		})
		// A loser that starts after the winner finished finds it deleted.
		if ok, lost := tally(t, errs, store.ErrStale, sprm.ErrInstanceNotFound); ok != 1 || lost != writers-1 {
			t.Fatalf("deletes at one version: %d succeeded, %d refused; want 1 and %d", ok, lost, writers-1)
		}
		if n := deletesOf(e.p, "deleted"); n != 1 {
			t.Fatalf("the provider saw %d deletes, want 1", n)
		}
	})
}

// tally counts the nil errors and those that are one of want; any other
// error fails the test.
func tally(t *testing.T, errs []error, want ...error) (ok, refused int) {
	t.Helper()
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		known := false
		for _, w := range want {
			known = known || errors.Is(err, w)
		}
		if !known {
			t.Fatalf("unexpected error: %v", err)
		}
		refused++
	}
	return ok, refused
}
