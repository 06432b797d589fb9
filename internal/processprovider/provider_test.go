package processprovider

import (
	stdcmp "cmp" // cmp is go-cmp in this file
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/pkg/provider"
)

func TestCreate_StartsProcess_DeleteStopsIt(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	const id = "sleeper"

	b.mustCreate(t, id, `{"process": {"command": ["/bin/sleep"], "args": ["60"]}, "image": {"reference": "ignored"}}`)
	r := b.expect(t, id, provider.StatusRunning)
	if !r.ObservedTime.Equal(testNow) {
		t.Errorf("ObservedTime = %v, want %v from Config.Now", r.ObservedTime, testNow)
	}
	pid := b.mustPID(t, id)
	if !strings.Contains(r.Message, strconv.Itoa(pid)) {
		t.Errorf("RUNNING message %q does not name pid %d", r.Message, pid)
	}
	if !alive(t, pid) {
		t.Fatalf("process %d is not running", pid)
	}
	// RUNNING follows the exec, but the kernel fills in the new program's
	// arguments a moment later.
	var cmdline []byte
	poll.UntilWithin(t, waitFor, "the process's command line is readable", func() bool {
		cmdline, _ = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		return len(cmdline) > 0
	})
	if want := "/bin/sleep\x0060\x00"; string(cmdline) != want {
		t.Errorf("cmdline = %q, want %q", cmdline, want)
	}
	if got, _ := b.p.Get(ctx, id); got.Status != provider.StatusRunning {
		t.Errorf("Get = %+v, want RUNNING", got)
	}

	b.mustDelete(t, id)
	if alive(t, pid) {
		t.Errorf("process %d still runs after DELETED", pid)
	}
	if _, err := b.p.Get(ctx, id); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("Get after DELETED: err = %v, want ErrNotFound", err)
	}
	if _, err := b.p.Delete(ctx, id); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("second Delete: err = %v, want ErrNotFound", err)
	}
	if _, ok := b.p.PID(id); ok {
		t.Error("PID after DELETED: still has a process")
	}
	if _, err := os.Stat(filepath.Join(b.workDir, id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("work dir after DELETED: stat err = %v, want not exist", err)
	}
}

func TestDelete_UnknownInstanceIsNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	if _, err := b.p.Delete(context.Background(), "never-created"); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("Delete: err = %v, want ErrNotFound", err)
	}
	if _, err := b.p.Get(context.Background(), "never-created"); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("Get: err = %v, want ErrNotFound", err)
	}
}

// TestCreate_RestartPolicy runs a process that counts its runs in a file and
// exits, and checks how often each policy runs it and what it reports.
func TestCreate_RestartPolicy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		reason string
		// exit is the shell command the process ends with.
		exit string
		// extra is spec JSON after the process field.
		extra       string
		wantRuns    int
		wantMessage string
		// wantStatus is the final status: FAILED unless set.
		wantStatus provider.Status
	}{
		{
			name:        "NeverReportsExitCode",
			reason:      "never does not restart a failure and says which status it exited with",
			exit:        "exit 3",
			extra:       `, "restart_policy": "never"`,
			wantRuns:    1,
			wantMessage: "exited with status 3",
		},
		{
			name:        "NeverCleanExitIsCompleted",
			reason:      "a clean exit that is not restarted ran to its end: COMPLETED, not FAILED",
			exit:        "exit 0",
			extra:       `, "restart_policy": "never"`,
			wantRuns:    1,
			wantMessage: "completed: the process exited with status 0; restart_policy never",
			wantStatus:  provider.StatusCompleted,
		},
		{
			name:        "OnFailureRestartsUpToMaxRestarts",
			reason:      "on_failure restarts a failing process max_restarts times, then gives up",
			exit:        "exit 1",
			extra:       `, "restart_policy": "on_failure", "max_restarts": 2`,
			wantRuns:    3,
			wantMessage: "gave up after 2 restarts",
		},
		{
			name:        "OnFailureDoesNotRestartCleanExit",
			reason:      "on_failure treats exit 0 as final: a completion",
			exit:        "exit 0",
			extra:       `, "restart_policy": "on_failure", "max_restarts": 2`,
			wantRuns:    1,
			wantMessage: "completed: the process exited with status 0; restart_policy on_failure",
			wantStatus:  provider.StatusCompleted,
		},
		{
			name:        "OnFailureRestartsAfterSignal",
			reason:      "death by a signal is a failure, and the message names the signal",
			exit:        "kill -KILL $$",
			extra:       `, "max_restarts": 1`,
			wantRuns:    2,
			wantMessage: "killed by signal 9",
		},
		{
			name:        "DefaultsAreOnFailureAndFiveRestarts",
			reason:      "without restart_policy and max_restarts a failing process runs 1+5 times",
			exit:        "exit 1",
			wantRuns:    6,
			wantMessage: "gave up after 5 restarts (max_restarts 5)",
		},
		{
			name:        "MaxRestartsZeroNeverRestarts",
			reason:      "max_restarts 0 allows no restart",
			exit:        "exit 1",
			extra:       `, "max_restarts": 0`,
			wantRuns:    1,
			wantMessage: "gave up after 0 restarts",
		},
		{
			name:        "AlwaysRestartsCleanExit",
			reason:      "always restarts even after exit 0, up to max_restarts",
			exit:        "exit 0",
			extra:       `, "restart_policy": "always", "max_restarts": 2`,
			wantRuns:    3,
			wantMessage: "gave up after 2 restarts",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			const id = "job"
			b.mustCreate(t, id, `{"process": {"command": ["/bin/sh", "-c", "echo run >> runs.txt; `+tc.exit+`"]}`+tc.extra+`}`)

			// Restarts keep RUNNING (each reported with its message): RUNNING
			// until the final status.
			want := stdcmp.Or(tc.wantStatus, provider.StatusFailed)
			b.expect(t, id, provider.StatusRunning)
			r := b.nextFor(t, id)
			for r.Status == provider.StatusRunning {
				r = b.nextFor(t, id)
			}
			if r.Status != want || !strings.Contains(r.Message, tc.wantMessage) {
				t.Fatalf("%s\nreport = %s %q, want %s containing %q", tc.reason, r.Status, r.Message, want, tc.wantMessage)
			}
			if got := len(b.lines(t, id, "runs.txt")); got != tc.wantRuns {
				t.Errorf("%s\nruns = %d, want %d", tc.reason, got, tc.wantRuns)
			}
			got, err := b.p.Get(context.Background(), id)
			if err != nil || got.Status != want || got.Message != r.Message {
				t.Errorf("Get = %+v, %v; want the last report's status and message", got, err)
			}
			b.mustDelete(t, id) // a FAILED or COMPLETED instance is still held until deleted
		})
	}
}

func TestCreate_FailedSaysTheLastLinesOfStderr(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const id = "stderr"
	// Each run writes seven lines to stderr, numbered by run: the message
	// says the last five of the last run, once.
	script := `echo run >> runs.txt; n=$(wc -l < runs.txt); for i in 1 2 3 4 5 6 7; do echo \"line $i of run $n\" >&2; done; exit 1`
	b.mustCreate(t, id, `{"process": {"command": ["/bin/sh", "-c", "`+script+`"]}, "max_restarts": 1}`)
	r := b.nextFor(t, id)
	for r.Status == provider.StatusRunning {
		if strings.Contains(r.Message, "stderr") {
			t.Errorf("restarting message %q has the stderr tail; only the failure has", r.Message)
		}
		r = b.nextFor(t, id)
	}
	want := "process exited with status 1; gave up after 1 restarts (max_restarts 1); stderr: " +
		"line 3 of run 2 | line 4 of run 2 | line 5 of run 2 | line 6 of run 2 | line 7 of run 2"
	if r.Status != provider.StatusFailed || r.Message != want {
		t.Fatalf("report = %s %q, want FAILED %q", r.Status, r.Message, want)
	}
	if got, err := b.p.Get(context.Background(), id); err != nil || got.Message != want {
		t.Errorf("Get = %+v, %v; want the message %q", got, err, want)
	}
	b.mustDelete(t, id)
}

func TestCreate_LongRunEndsTheRestartStreak(t *testing.T) {
	t.Parallel()
	// Every run "lasts" an hour, past RestartResetAfter, so max_restarts 1
	// never runs out however often the process exits.
	b := setup(t, func(c *Config) { c.Now = advancingClock(time.Hour) })
	const id = "flaky"
	b.mustCreate(t, id, `{"process": {"command": ["/bin/sh", "-c", "echo run >> runs.txt; exit 1"]}, "restart_policy": "always", "max_restarts": 1}`)
	b.expect(t, id, provider.StatusRunning)
	poll.UntilWithin(t, waitFor, "a fourth run has started", func() bool { return len(b.lines(t, id, "runs.txt")) >= 4 })
	got, err := b.p.Get(context.Background(), id)
	if err != nil || got.Status != provider.StatusRunning {
		t.Errorf("Get = %+v, %v; want RUNNING", got, err)
	}
	if _, err := b.p.Delete(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	// Each restart was reported, RUNNING with its count: never FAILED.
	var restarts int64
	for r := b.nextFor(t, id); r.Status != provider.StatusDeleted; r = b.nextFor(t, id) {
		if r.Status != provider.StatusRunning || r.RestartCount == nil || *r.RestartCount < restarts {
			t.Fatalf("report %s %q (restart count %v) while restarting, want RUNNING with a growing count", r.Status, r.Message, r.RestartCount)
		}
		restarts = *r.RestartCount
	}
	if restarts < 3 {
		t.Errorf("restart count reported = %d, want at least 3 (four runs)", restarts)
	}
}

func TestDelete_DuringRestartBackoff(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.RestartBackoff, c.RestartBackoffMax = time.Hour, time.Hour })
	const id = "waiting"
	b.mustCreate(t, id, `{"process": {"command": ["/bin/false"]}, "restart_policy": "always"}`)
	b.expect(t, id, provider.StatusRunning)
	poll.UntilWithin(t, waitFor, "the process has exited", func() bool {
		_, running := b.p.PID(id)
		in, _ := b.p.Get(context.Background(), id)
		return !running && strings.Contains(in.Message, "restart 1 of 5")
	})
	b.mustDelete(t, id) // does not wait out the hour
}

func TestDelete_KillsGroupThatIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.StopGrace = 50 * time.Millisecond })
	const id = "stubborn"
	// The ignored SIGTERM is inherited by the forked sleep, which writes its
	// pid once the trap is in place.
	b.mustCreate(t, id, `{"process": {"command": ["/bin/sh", "-c", "trap '' TERM; /bin/sleep 60 & echo $! > child.pid; wait"]}}`)
	b.expect(t, id, provider.StatusRunning)
	pid := b.mustPID(t, id)
	child := b.waitChildPID(t, id)

	b.mustDelete(t, id)
	for _, p := range []int{pid, child} {
		if alive(t, p) {
			t.Errorf("process %d survived the delete", p)
		}
	}
}

func TestCreate_InvalidRequestIsRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		reason    string
		id        string
		spec      string
		wantField string
	}{
		{name: "NoProcess", reason: "a container spec without process cannot run", spec: `{"image": {"reference": "x"}}`, wantField: "spec.process.command"},
		{name: "NoCommand", reason: "args alone name no executable", spec: `{"process": {"args": ["60"]}}`, wantField: "spec.process.command"},
		{name: "EmptyCommand", reason: "an empty array names no executable", spec: `{"process": {"command": []}}`, wantField: "spec.process.command"},
		{name: "BlankExecutable", reason: "the executable must be named", spec: `{"process": {"command": [""]}}`, wantField: "spec.process.command[0]"},
		{name: "CommandIsString", reason: "command is an array, not a shell line", spec: `{"process": {"command": "sleep 60"}}`, wantField: "spec.process.command"},
		{name: "BadRestartPolicy", reason: "only the three policies exist", spec: `{"process": {"command": ["/bin/true"]}, "restart_policy": "sometimes"}`, wantField: "spec.restart_policy"},
		{name: "NegativeMaxRestarts", reason: "a negative bound means nothing", spec: `{"process": {"command": ["/bin/true"]}, "max_restarts": -1}`, wantField: "spec.max_restarts"},
		{name: "FractionalMaxRestarts", reason: "max_restarts counts restarts", spec: `{"process": {"command": ["/bin/true"]}, "max_restarts": 1.5}`, wantField: "spec.max_restarts"},
		{name: "EnvWithoutName", reason: "an env entry needs a name", spec: `{"process": {"command": ["/bin/true"], "env": [{"value": "x"}]}}`, wantField: "spec.process.env[0].name"},
		{name: "IDWithSlash", reason: "the id names a directory under WorkDir", id: "../escape", spec: `{"process": {"command": ["/bin/true"]}}`, wantField: "instance_id"},
		{name: "EmptyID", reason: "the id is required", id: "-", spec: `{"process": {"command": ["/bin/true"]}}`, wantField: "instance_id"},
	}
	b := setup(t, nil)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id := stdcmp.Or(tc.id, "refused-"+tc.name)
			if id == "-" {
				id = ""
			}
			_, err := b.create(t, id, tc.spec)
			var status interface{ HTTPStatus() int }
			if !errors.As(err, &status) || status.HTTPStatus() != 400 {
				t.Fatalf("%s\nerr = %v, want one with HTTPStatus 400", tc.reason, err)
			}
			ie, ok := errors.AsType[*invalid.Error](err)
			if !ok {
				t.Fatalf("%s\nerr = %v, want an *invalid.Error inside", tc.reason, err)
			}
			var fields []string
			for _, f := range ie.Fields {
				fields = append(fields, f.Field)
			}
			if diff := cmp.Diff([]string{tc.wantField}, fields); diff != "" {
				t.Errorf("%s\nfields (-want +got):\n%s", tc.reason, diff)
			}
			if _, err := b.p.Get(context.Background(), id); !errors.Is(err, provider.ErrNotFound) {
				t.Errorf("Get after refusal: err = %v, want ErrNotFound", err)
			}
		})
	}
}

func TestCreate_CommandNotFoundFails(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, command, wantMessage string
	}{
		{name: "Path", command: "/nonexistent/steward-test-command", wantMessage: "no such file or directory"},
		{name: "BareName", command: "steward-test-no-such-command", wantMessage: "executable file not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			const id = "missing"
			b.mustCreate(t, id, `{"process": {"command": ["`+tc.command+`"]}, "restart_policy": "always"}`)
			r := b.expect(t, id, provider.StatusFailed)
			if !strings.Contains(r.Message, tc.wantMessage) {
				t.Errorf("message = %q, want it to contain %q", r.Message, tc.wantMessage)
			}
			if _, ok := b.p.PID(id); ok {
				t.Error("PID: a process exists")
			}
			b.mustDelete(t, id)
		})
	}
}

func TestCreate_IsIdempotent(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const id = "once"
	spec := `{"process": {"command": ["/bin/sh", "-c", "echo started >> starts.txt; exec /bin/sleep 60"]}}`

	var wg sync.WaitGroup
	answers := make([]provider.Instance, 8)
	errs := make([]error, 8)
	for i := range answers {
		wg.Go(func() { answers[i], errs[i] = b.create(t, id, spec) })
	}
	wg.Wait()
	for i := range answers {
		if errs[i] != nil || answers[i].InstanceID != id {
			t.Fatalf("Create #%d = %+v, %v", i, answers[i], errs[i])
		}
	}
	b.expect(t, id, provider.StatusRunning)
	pid := b.mustPID(t, id)

	again, err := b.create(t, id, `{"process": {"command": ["/bin/true"]}}`)
	if err != nil || again.Status != provider.StatusRunning {
		t.Errorf("Create again = %+v, %v; want the running instance", again, err)
	}
	if got := b.mustPID(t, id); got != pid {
		t.Errorf("PID after Create again = %d, want %d", got, pid)
	}
	poll.UntilWithin(t, waitFor, "the process has logged its start", func() bool { return len(b.lines(t, id, "starts.txt")) > 0 })

	// After Stop every process that was ever started has ended, so the
	// count is final (Stop keeps the work dir).
	if err := b.p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := len(b.lines(t, id, "starts.txt")); got != 1 {
		t.Errorf("processes started = %d, want 1", got)
	}
}

func TestCreate_PassesArgsEnvAndLogs(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const id = "env-args"
	script := `printf '%s %s' \"$FOO\" \"$1\" > out.txt; echo to-stdout; echo to-stderr >&2; printf '%s|%s' \"$HOME\" \"$STEWARD_INSTANCE_ID\" > home.txt; env > env.txt`
	b.mustCreate(t, id, `{
		"process": {
			"command": ["/bin/sh", "-c", "`+script+`", "sh"],
			"args": ["world"],
			"env": [{"name": "FOO", "value": "hello"}, {"name": "BAR", "value": "1"}]
		},
		"restart_policy": "never",
		"resources": {"cpu": {"min": "1", "max": "2"}}
	}`)
	b.expect(t, id, provider.StatusRunning)
	b.expect(t, id, provider.StatusCompleted) // exit 0 under never

	dir := filepath.Join(b.workDir, id)
	want := map[string]string{
		"out.txt":    "hello world",
		"stdout.log": "to-stdout\n",
		"stderr.log": "to-stderr\n",
		"home.txt":   dir + "|" + id,
	}
	got := map[string]string{}
	for name := range want {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got[name] = string(data)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}

	// Only the base variables and the spec's reach the process, never the
	// provider's own environment (sh adds PWD, SHLVL and _ itself).
	var names []string
	for _, line := range b.lines(t, id, "env.txt") {
		name, _, _ := strings.Cut(line, "=")
		if !slices.Contains([]string{"PWD", "SHLVL", "_", "OLDPWD"}, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"BAR", "FOO", "HOME", "PATH", "STEWARD_INSTANCE_ID"}, names); diff != "" {
		t.Errorf("environment names (-want +got):\n%s", diff)
	}
	b.mustDelete(t, id)
}

func TestNoOp_ReportsRunningWithoutProcess(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.NoOp, c.WorkDir = true, "" })
	ctx := context.Background()
	const id = "noop"

	b.mustCreate(t, id, `{"image": {"reference": "quay.io/x/y:1"}, "resources": {"cpu": {"min": "1", "max": "1"}}}`)
	r := b.expect(t, id, provider.StatusRunning)
	if !r.ObservedTime.Equal(testNow) {
		t.Errorf("ObservedTime = %v, want %v", r.ObservedTime, testNow)
	}
	if _, ok := b.p.PID(id); ok {
		t.Error("PID: no-op mode started a process")
	}
	if got, err := b.p.Get(ctx, id); err != nil || got.Status != provider.StatusRunning {
		t.Errorf("Get = %+v, %v; want RUNNING", got, err)
	}
	if again, err := b.create(t, id, `{}`); err != nil || again.Status != provider.StatusRunning {
		t.Errorf("Create again = %+v, %v; want RUNNING", again, err)
	}
	if err := b.p.Health(ctx); err != nil {
		t.Errorf("Health: %v", err)
	}

	b.mustDelete(t, id)
	if _, err := b.p.Get(ctx, id); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("Get after delete: err = %v, want ErrNotFound", err)
	}
	// A bad field is still refused: no-op mode only waives the command.
	if _, err := b.create(t, "bad", `{"restart_policy": "sometimes"}`); !errors.As(err, new(*RequestError)) {
		t.Errorf("Create with a bad policy: err = %v, want *RequestError", err)
	}
}

func TestStop_LeavesEveryProcessRunning(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) {
		c.StopGrace = 50 * time.Millisecond
		c.RestartBackoff, c.RestartBackoffMax = time.Hour, time.Hour // "backoff" waits through Stop
	})
	ctx := context.Background()
	specs := map[string]string{
		"plain":    `{"process": {"command": ["/bin/sleep", "60"]}}`,
		"stubborn": `{"process": {"command": ["/bin/sh", "-c", "trap '' TERM; /bin/sleep 60 & echo $! > child.pid; wait"]}}`,
		"forking":  `{"process": {"command": ["/bin/sh", "-c", "/bin/sleep 60 & echo $! > child.pid; wait"]}}`,
		"backoff":  `{"process": {"command": ["/bin/false"]}, "restart_policy": "always"}`,
	}
	for id, spec := range specs {
		b.mustCreate(t, id, spec)
	}
	leaders := map[string]int{}
	// Each instance reports RUNNING, and "backoff" its exit too (restart
	// 1, waiting an hour), in any order.
	for seen, backoffExit := 0, false; seen < len(specs) || !backoffExit; {
		r := b.next(t)
		if r.Status != provider.StatusRunning {
			t.Fatalf("report %+v, want RUNNING", r)
		}
		if r.RestartCount != nil && *r.RestartCount > 0 {
			backoffExit = true
			continue
		}
		seen++
		if pid, ok := b.p.PID(r.InstanceID); ok && r.InstanceID != "backoff" {
			leaders[r.InstanceID] = pid
		}
	}
	pids := []int{b.waitChildPID(t, "stubborn"), b.waitChildPID(t, "forking")}
	for _, pid := range leaders {
		pids = append(pids, pid)
	}
	poll.UntilWithin(t, waitFor, "backoff waits to restart", func() bool {
		_, running := b.p.PID("backoff")
		return !running
	})

	if err := b.p.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	for _, pid := range pids {
		if !alive(t, pid) {
			t.Errorf("process %d did not survive Stop", pid)
		}
	}
	// Nothing changed for Steward: Stop reports nothing.
	select {
	case r := <-b.reports:
		t.Errorf("report after Stop: %+v, want none", r)
	default:
	}
	// Each instance's record names its process, for the next provider.
	for id := range specs {
		r := readRecordFile(t, b.workDir, id)
		if want := leaders[id]; r.Members[0].PID != want || (want != 0 && r.Members[0].StartTime == 0) {
			t.Errorf("record of %s: member %+v, want pid %d with its start time", id, r.Members[0], want)
		}
	}
	if r := readRecordFile(t, b.workDir, "backoff"); r.Members[0].Consecutive != 1 || r.Members[0].Failed {
		t.Errorf("record of backoff: member %+v, want one restart due, not failed", r.Members[0])
	}

	if _, err := b.create(t, "late", specs["plain"]); !errors.Is(err, ErrStopped) {
		t.Errorf("Create after Stop: err = %v, want ErrStopped", err)
	}
	if _, err := b.p.Delete(ctx, "plain"); !errors.Is(err, ErrStopped) {
		t.Errorf("Delete after Stop: err = %v, want ErrStopped", err)
	}
	if err := b.p.Health(ctx); !errors.Is(err, ErrStopped) {
		t.Errorf("Health after Stop: err = %v, want ErrStopped", err)
	}
	if _, err := b.p.Restore(ctx); !errors.Is(err, ErrStopped) {
		t.Errorf("Restore after Stop: err = %v, want ErrStopped", err)
	}
	if err := b.p.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStop_CtxEndKillsADeletingProcessAtOnce(t *testing.T) {
	t.Parallel()
	// A grace of an hour would hold the delete, and Stop with it; Stop's
	// ctx ending sends SIGKILL.
	b := setup(t, func(c *Config) { c.StopGrace = time.Hour })
	const id = "stubborn"
	b.mustCreate(t, id, `{"process": {"command": ["/bin/sh", "-c", "trap '' TERM; /bin/sleep 60 & echo $! > child.pid; wait"]}}`)
	b.expect(t, id, provider.StatusRunning)
	pid := b.mustPID(t, id)
	child := b.waitChildPID(t, id)
	if _, err := b.p.Delete(context.Background(), id); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.p.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop: err = %v, want DeadlineExceeded", err)
	}
	for _, p := range []int{pid, child} {
		if alive(t, p) {
			t.Errorf("process %d survived Stop", p)
		}
	}
	if _, err := os.Stat(filepath.Join(b.workDir, stateDirName, id+".json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("record of the deleted instance: %v, want it gone", err)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	b := setup(t, nil)
	if err := b.p.Health(ctx); err != nil {
		t.Errorf("Health: %v", err)
	}

	// A work dir below a regular file can never be created, even by root.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	broken := setup(t, func(c *Config) { c.WorkDir = filepath.Join(file, "work") })
	if err := broken.p.Health(ctx); err == nil {
		t.Error("Health with an unusable work dir: nil, want an error")
	}
}

// waitChildPID waits for the instance's process to write the pid of the
// child it forked to child.pid, and returns it.
func (b *bundle) waitChildPID(tb testing.TB, id string) int {
	tb.Helper()
	var pid int
	poll.UntilWithin(tb, waitFor, "child.pid of "+id+" is written", func() bool {
		l := b.lines(tb, id, "child.pid")
		if len(l) == 0 {
			return false
		}
		var err error
		pid, err = strconv.Atoi(l[0])
		return err == nil
	})
	return pid
}
