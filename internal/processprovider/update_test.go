package processprovider

import (
	"context"
	"errors"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/pkg/provider"
)

// update calls Update with a spec given as JSON, as create does.
func (b *bundle) update(tb testing.TB, id, specJSON string) (provider.Instance, error) {
	tb.Helper()
	return b.p.Update(context.Background(), provider.UpdateRequest{InstanceID: id, ServiceType: "container", Spec: decodeSpec(tb, specJSON)})
}

// mustUpdate is update that fails the test on an error or an answer other
// than PROVISIONING.
func (b *bundle) mustUpdate(tb testing.TB, id, specJSON string) {
	tb.Helper()
	in, err := b.update(tb, id, specJSON)
	if err != nil || in.Status != provider.StatusProvisioning {
		tb.Fatalf("Update(%s) = %+v, %v; want PROVISIONING", id, in, err)
	}
}

// greeter is the spec of a process that prints its argument and $GREETING
// to stdout.log, then sleeps.
func greeter(arg, greeting string) string {
	return `{"process": {"command": ["/bin/sh", "-c", "echo \"$1 $GREETING\"; exec /bin/sleep 60", "sh"], "args": ["` + arg +
		`"], "env": [{"name": "GREETING", "value": "` + greeting + `"}]}}`
}

func TestUpdate_RestartsWithNewArgsAndEnv(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const id = "greeter"
	b.mustCreate(t, id, greeter("first", "hello"))
	b.expect(t, id, provider.StatusRunning)
	oldPID := b.mustPID(t, id)
	poll.UntilWithin(t, waitFor, "the first process has logged its greeting", func() bool {
		return len(b.lines(t, id, "stdout.log")) == 2
	})

	b.mustUpdate(t, id, greeter("second", "bye"))
	b.expect(t, id, provider.StatusProvisioning)
	r := b.expect(t, id, provider.StatusRunning)
	newPID := b.mustPID(t, id)
	if newPID == oldPID || !strings.Contains(r.Message, strconv.Itoa(newPID)) {
		t.Errorf("RUNNING %q with pid %d, want a new process (old pid %d) named in the message", r.Message, newPID, oldPID)
	}
	if alive(t, oldPID) {
		t.Errorf("old process %d still runs after the update", oldPID)
	}
	if !alive(t, newPID) {
		t.Errorf("new process %d is not running", newPID)
	}
	// One log, appended across the update: the new process got the new
	// args and env.
	poll.UntilWithin(t, waitFor, "the new process has logged its greeting", func() bool {
		return len(b.lines(t, id, "stdout.log")) >= 4
	})
	if diff := cmp.Diff([]string{"first", "hello", "second", "bye"}, b.lines(t, id, "stdout.log")); diff != "" {
		t.Errorf("stdout.log (-want +got):\n%s", diff)
	}
	if got, err := b.p.Get(context.Background(), id); err != nil || got.Status != provider.StatusRunning {
		t.Errorf("Get = %+v, %v; want RUNNING", got, err)
	}
	b.mustDelete(t, id)
}

func TestUpdate_SameSpecRestartsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const id = "steady"
	b.mustCreate(t, id, `{"process": {"command": ["/bin/sleep", "60"]}}`)
	running := b.expect(t, id, provider.StatusRunning)
	pid := b.mustPID(t, id)

	// The same spec as the provider reads it: split otherwise between
	// command and args, defaults spelled out, an ignored field added.
	got, err := b.update(t, id, `{"process": {"command": ["/bin/sleep"], "args": ["60"]}, "restart_policy": "on_failure", "max_restarts": 5, "image": {"reference": "x"}}`)
	want := provider.Instance{InstanceID: id, Status: provider.StatusRunning, Message: running.Message}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Update with the same spec = %+v, %v; want %+v", got, err, want)
	}
	if now := b.mustPID(t, id); now != pid {
		t.Errorf("PID after the update = %d, want %d", now, pid)
	}
	// Nothing was reported in between: the next report is the delete's.
	if _, err := b.p.Delete(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	b.expect(t, id, provider.StatusDeleted)
}

func TestUpdate_ConcurrentSameUpdatesRestartOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const id = "counted"
	spec := func(n int) string {
		return `{"process": {"command": ["/bin/sh", "-c", "echo started >> starts.txt; exec /bin/sleep ` + strconv.Itoa(n) + `"]}}`
	}
	b.mustCreate(t, id, spec(60))
	b.expect(t, id, provider.StatusRunning)
	poll.UntilWithin(t, waitFor, "the first process has logged its start", func() bool { return len(b.lines(t, id, "starts.txt")) == 1 })

	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = b.update(t, id, spec(61)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Update #%d: %v", i, err)
		}
	}
	b.expect(t, id, provider.StatusProvisioning)
	b.expect(t, id, provider.StatusRunning)
	poll.UntilWithin(t, waitFor, "the new process has logged its start", func() bool { return len(b.lines(t, id, "starts.txt")) >= 2 })

	// After Stop every process ever started has ended: the count is final.
	if err := b.p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := len(b.lines(t, id, "starts.txt")); got != 2 {
		t.Errorf("processes started = %d, want 2: the create's and one for the update", got)
	}
}

func TestUpdate_LastOfQuickUpdatesRuns(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const id = "hurried"
	b.mustCreate(t, id, `{"process": {"command": ["/bin/sleep", "60"]}}`)
	b.mustUpdate(t, id, `{"process": {"command": ["/bin/sleep", "61"]}}`)
	if _, err := b.update(t, id, `{"process": {"command": ["/bin/sleep", "62"]}}`); err != nil {
		t.Fatal(err)
	}
	// Only the last spec's process may set RUNNING now.
	poll.UntilWithin(t, waitFor, "the instance runs again", func() bool {
		in, err := b.p.Get(context.Background(), id)
		return err == nil && in.Status == provider.StatusRunning
	})
	pid := b.mustPID(t, id)
	var cmdline []byte
	poll.UntilWithin(t, waitFor, "the process's command line is readable", func() bool {
		cmdline, _ = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		return len(cmdline) > 0
	})
	if want := "/bin/sleep\x0062\x00"; string(cmdline) != want {
		t.Errorf("cmdline = %q, want %q", cmdline, want)
	}
}

func TestUpdate_RunsAFailedInstanceAgain(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const id = "revived"
	b.mustCreate(t, id, `{"process": {"command": ["/bin/false"]}, "restart_policy": "never"}`)
	b.expect(t, id, provider.StatusRunning)
	b.expect(t, id, provider.StatusFailed)

	b.mustUpdate(t, id, `{"process": {"command": ["/bin/sleep", "60"]}}`)
	b.expect(t, id, provider.StatusProvisioning)
	b.expect(t, id, provider.StatusRunning)
	if pid := b.mustPID(t, id); !alive(t, pid) {
		t.Errorf("process %d is not running", pid)
	}
	b.mustDelete(t, id)
}

func TestUpdate_Refused(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	const id = "kept"
	b.mustCreate(t, id, `{"process": {"command": ["/bin/sleep", "60"]}}`)
	b.expect(t, id, provider.StatusRunning)
	pid := b.mustPID(t, id)

	if _, err := b.update(t, "never-created", `{"process": {"command": ["/bin/true"]}}`); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("Update of an unknown instance: err = %v, want ErrNotFound", err)
	}
	if _, err := b.update(t, "never-created", `{"restart_policy": "sometimes"}`); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("Update of an unknown instance with a bad spec: err = %v, want ErrNotFound first", err)
	}
	_, err := b.update(t, id, `{"process": {"command": ["/bin/sleep", "60"]}, "restart_policy": "sometimes"}`)
	if _, ok := errors.AsType[*RequestError](err); !ok {
		t.Errorf("Update with a bad spec: err = %v, want *RequestError", err)
	}
	if got, _ := b.p.Get(ctx, id); got.Status != provider.StatusRunning || b.mustPID(t, id) != pid {
		t.Errorf("after a refused update: %+v, pid %d; want RUNNING as pid %d", got, b.mustPID(t, id), pid)
	}

	if err := b.p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.update(t, id, `{"process": {"command": ["/bin/true"]}}`); !errors.Is(err, ErrStopped) {
		t.Errorf("Update after Stop: err = %v, want ErrStopped", err)
	}
}

func TestUpdate_DeletingIsConflict(t *testing.T) {
	t.Parallel()
	// A grace of an hour keeps the instance DELETING until Stop's ctx ends.
	b := setup(t, func(c *Config) { c.StopGrace = time.Hour })
	const id = "leaving"
	b.mustCreate(t, id, `{"process": {"command": ["/bin/sh", "-c", "trap '' TERM; /bin/sleep 60 & echo $! > child.pid; wait"]}}`)
	b.expect(t, id, provider.StatusRunning)
	b.waitChildPID(t, id) // the trap is in place
	if _, err := b.p.Delete(context.Background(), id); err != nil {
		t.Fatal(err)
	}

	_, err := b.update(t, id, `{"process": {"command": ["/bin/true"]}}`)
	var status interface{ HTTPStatus() int }
	if !errors.Is(err, ErrDeleting) || !errors.As(err, &status) || status.HTTPStatus() != http.StatusConflict {
		t.Errorf("Update while DELETING: err = %v, want ErrDeleting answering 409", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.p.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop: err = %v, want DeadlineExceeded", err)
	}
}

func TestNoOp_UpdateWithoutProcess(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.NoOp, c.WorkDir = true, "" })
	const id = "noop"
	b.mustCreate(t, id, `{}`)
	b.expect(t, id, provider.StatusRunning)

	b.mustUpdate(t, id, `{"max_restarts": 1}`)
	b.expect(t, id, provider.StatusProvisioning)
	b.expect(t, id, provider.StatusRunning)
	if _, ok := b.p.PID(id); ok {
		t.Error("PID: no-op mode started a process")
	}
	if again, err := b.update(t, id, `{"max_restarts": 1}`); err != nil || again.Status != provider.StatusRunning {
		t.Errorf("Update again = %+v, %v; want RUNNING, unchanged", again, err)
	}
	b.mustDelete(t, id) // the next report is the delete's: the same spec reported nothing
}
