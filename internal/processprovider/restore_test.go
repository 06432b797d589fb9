package processprovider

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/pkg/provider"
)

// readRecordFile reads instance id's record in workDir.
func readRecordFile(tb testing.TB, workDir, id string) record {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(workDir, stateDirName, id+".json"))
	if err != nil {
		tb.Fatalf("record of %s: %v", id, err)
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		tb.Fatalf("record of %s: %v", id, err)
	}
	return r
}

// nextEach returns the next n reports, which must be for n different
// instances, by instance id.
func (b *bundle) nextEach(tb testing.TB, n int) map[string]provider.StatusReport {
	tb.Helper()
	got := map[string]provider.StatusReport{}
	for range n {
		r := b.next(tb)
		if prev, dup := got[r.InstanceID]; dup {
			tb.Fatalf("reports %+v and %+v for one instance, want one for each of %d", prev, r, n)
		}
		got[r.InstanceID] = r
	}
	return got
}

// wantEach wants the next reports to be one of status want for each of
// ids, in any order.
func (b *bundle) wantEach(tb testing.TB, want provider.Status, ids ...string) {
	tb.Helper()
	got := b.nextEach(tb, len(ids))
	for _, id := range ids {
		if r, ok := got[id]; !ok || r.Status != want {
			tb.Fatalf("report of %s: %+v, want %s", id, r, want)
		}
	}
}

// mustStop stops b's provider, failing tb on an error.
func (b *bundle) mustStop(tb testing.TB) {
	tb.Helper()
	if err := b.p.Stop(context.Background()); err != nil {
		tb.Fatalf("Stop: %v", err)
	}
}

// mustRestore calls Restore and wants n instances restored.
func (b *bundle) mustRestore(tb testing.TB, n int) {
	tb.Helper()
	got, err := b.p.Restore(context.Background())
	if err != nil || got != n {
		tb.Fatalf("Restore = %d, %v; want %d instances", got, err, n)
	}
}

// waitNewPID waits until instance id runs a live process other than old,
// and returns it.
func (b *bundle) waitNewPID(tb testing.TB, id string, old int) int {
	tb.Helper()
	var pid int
	poll.UntilWithin(tb, waitFor, id+" runs a new process", func() bool {
		var ok bool
		pid, ok = b.p.PID(id)
		return ok && pid != old && alive(tb, pid)
	})
	return pid
}

// killAndWait kills pid with SIGKILL and waits until it is no longer alive
// (a zombie, or gone).
func killAndWait(tb testing.TB, pid int) {
	tb.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		tb.Fatalf("kill %d: %v", pid, err)
	}
	poll.UntilWithin(tb, waitFor, "process "+strconv.Itoa(pid)+" has died", func() bool { return !alive(tb, pid) })
}

// A provider that stops leaves its processes running; a new one on the
// same WorkDir adopts them (same pids), reports them RUNNING, and
// supervises them again under their restart policies.
func TestRestore_AdoptsRunningProcessesAndSupervisesThemAgain(t *testing.T) {
	t.Parallel()
	first := setup(t, nil)
	first.mustCreate(t, "always", `{"process": {"command": ["/bin/sleep", "600"]}, "restart_policy": "always"}`)
	first.mustCreate(t, "never", `{"process": {"command": ["/bin/sleep", "600"]}, "restart_policy": "never"}`)
	first.wantEach(t, provider.StatusRunning, "always", "never")
	always, never := first.mustPID(t, "always"), first.mustPID(t, "never")

	first.mustStop(t)
	for _, pid := range []int{always, never} {
		if !alive(t, pid) {
			t.Fatalf("process %d did not survive the provider's Stop", pid)
		}
	}

	second := setupOn(t, first.workDir, nil)
	second.mustRestore(t, 2)
	reports := second.nextEach(t, 2)
	for id, pid := range map[string]int{"always": always, "never": never} {
		r := reports[id]
		if r.Status != provider.StatusRunning || !strings.Contains(r.Message, "adopted") {
			t.Errorf("report of %s: %+v, want RUNNING, saying the process was adopted", id, r)
		}
		if got := second.mustPID(t, id); got != pid {
			t.Errorf("PID(%s) = %d after restore, want the same process %d", id, got, pid)
		}
	}
	// Held again: Create answers the instance as it is.
	if in, err := second.create(t, "always", `{"process": {"command": ["/bin/true"]}}`); err != nil || in.Status != provider.StatusRunning {
		t.Errorf("Create of a restored id = %+v, %v; want the running instance", in, err)
	}

	// Supervised again: always restarts, never does not.
	killAndWait(t, always)
	restarted := second.waitNewPID(t, "always", always)
	if in, _ := second.p.Get(context.Background(), "always"); !strings.Contains(in.Message, "restarted 1 times") {
		t.Errorf("Get(always) message %q, want it to count the restart", in.Message)
	}
	if r := readRecordFile(t, second.workDir, "always"); r.Members[0].PID != restarted || r.Members[0].Restarts != 1 {
		t.Errorf("record of always: member %+v, want pid %d after 1 restart", r.Members[0], restarted)
	}
	killAndWait(t, never)
	if r := second.expect(t, "never", provider.StatusFailed); !strings.Contains(r.Message, "restart_policy never") {
		t.Errorf("FAILED report of never: %q, want it to name the policy", r.Message)
	}

	// Delete still stops the adopted instance's process and removes its
	// record.
	second.mustDelete(t, "always")
	if alive(t, restarted) {
		t.Errorf("process %d survived Delete", restarted)
	}
	if _, err := os.Stat(filepath.Join(second.workDir, stateDirName, "always.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("record after Delete: %v, want it gone", err)
	}
}

// A process that died while no provider ran is restarted on Restore when
// its policy says so, and reported as not running when it does not; a
// child's exit is known, so a clean exit under on_failure is final.
func TestRestore_ProcessDiedWhileTheProviderWasDown(t *testing.T) {
	t.Parallel()
	first := setup(t, nil)
	first.mustCreate(t, "always", `{"process": {"command": ["/bin/sleep", "600"]}, "restart_policy": "always"}`)
	first.mustCreate(t, "never", `{"process": {"command": ["/bin/sleep", "600"]}, "restart_policy": "never"}`)
	first.mustCreate(t, "completed", `{"process": {"command": ["/bin/sh", "-c", "trap 'exit 0' TERM; echo $$ > ready; while :; do sleep 0.05; done"]},
		"restart_policy": "on_failure"}`)
	first.wantEach(t, provider.StatusRunning, "always", "never", "completed")
	poll.UntilWithin(t, waitFor, "completed has set its trap", func() bool { return len(first.lines(t, "completed", "ready")) > 0 })
	always, never, completed := first.mustPID(t, "always"), first.mustPID(t, "never"), first.mustPID(t, "completed")
	first.mustStop(t)

	killAndWait(t, always)
	killAndWait(t, never)
	if err := syscall.Kill(completed, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	poll.UntilWithin(t, waitFor, "completed has exited", func() bool { return !alive(t, completed) })

	second := setupOn(t, first.workDir, nil)
	second.mustRestore(t, 3)
	reports := second.nextEach(t, 3)
	if r := reports["always"]; r.Status != provider.StatusRunning || !strings.Contains(r.Message, "restarted 1 times") {
		t.Errorf("report of always: %+v, want RUNNING, counting the restart", r)
	}
	if pid := second.waitNewPID(t, "always", always); readRecordFile(t, second.workDir, "always").Members[0].PID != pid {
		t.Errorf("record of always does not name its new process %d", pid)
	}
	if r := reports["never"]; r.Status != provider.StatusFailed || !strings.Contains(r.Message, "restart_policy never") ||
		!strings.Contains(r.Message, "provider was down") {
		t.Errorf("report of never: %+v, want FAILED, naming the policy and the downtime", r)
	}
	if _, ok := second.p.PID("never"); ok {
		t.Error("never runs a process after Restore")
	}
	if r := reports["completed"]; r.Status != provider.StatusCompleted || !strings.Contains(r.Message, "completed: the process exited with status 0") {
		t.Errorf("report of completed: %+v, want COMPLETED, naming its clean exit", r)
	}
}

// Members are adopted one by one: those still running keep their pids, a
// member that died meanwhile under never is failed, and the runtime report
// says so.
func TestRestore_MembersOneByOne(t *testing.T) {
	t.Parallel()
	rt := &runtimeRecorder{}
	first := &cluster{bundle: setup(t, func(c *Config) { c.Runtime = rt }), rt: rt}
	const id = "trio"
	first.mustCreateOrder(t, id, sleepers(threeMembers))
	pids := map[string]int{}
	for _, m := range []string{"server-0", "agent-0", "agent-1"} {
		pids[m] = first.mustMemberPID(t, id, m)
	}
	first.mustStop(t)
	killAndWait(t, pids["agent-0"])

	rt2 := &runtimeRecorder{}
	second := &cluster{bundle: setupOn(t, first.workDir, func(c *Config) { c.Runtime = rt2 }), rt: rt2}
	second.mustRestore(t, 1)
	second.expect(t, id, provider.StatusRunning)
	second.waitRuntime(t, id, "agent-0 failed", func(st provider.RuntimeState) bool {
		return st.Health == provider.RuntimeDegraded && memberHealth(st, "agent-0") == provider.RuntimeFailed &&
			memberHealth(st, "server-0") == provider.RuntimeHealthy
	})
	for _, m := range []string{"server-0", "agent-1"} {
		if got := second.mustMemberPID(t, id, m); got != pids[m] {
			t.Errorf("MemberPID(%s) = %d, want the adopted %d", m, got, pids[m])
		}
	}
	if _, ok := second.p.MemberPID(id, "agent-0"); ok {
		t.Error("agent-0 runs a process after Restore; restart_policy is never")
	}
}

// A delete accepted before the provider died is finished on Restore; a
// process of a replaced spec is stopped.
func TestRestore_FinishesADeleteAndStopsStaleProcesses(t *testing.T) {
	t.Parallel()
	first := setup(t, nil)
	first.mustCreate(t, "doomed", `{"process": {"command": ["/bin/sleep", "600"]}}`)
	first.mustCreate(t, "kept", `{"process": {"command": ["/bin/sleep", "600"]}}`)
	first.wantEach(t, provider.StatusRunning, "doomed", "kept")
	doomed, kept := first.mustPID(t, "doomed"), first.mustPID(t, "kept")
	first.mustStop(t)

	// As if the provider had died just after accepting a delete of doomed,
	// and while an update of kept stopped a process of the old spec.
	stale := exec.Command("/bin/sleep", "600")
	stale.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := stale.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stale.Process.Kill(); _ = stale.Wait() })
	st, err := readStat(stale.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(id string, f func(*record)) {
		r := readRecordFile(t, first.workDir, id)
		f(&r)
		if err := first.p.writeRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	edit("doomed", func(r *record) { r.Deleting = true })
	edit("kept", func(r *record) {
		r.Stale = []processRecord{{PID: stale.Process.Pid, StartTime: st.startTime, BootID: bootID()}}
	})

	second := setupOn(t, first.workDir, nil)
	second.mustRestore(t, 2)
	reports := second.nextEach(t, 2)
	if r := reports["doomed"]; r.Status != provider.StatusDeleted {
		t.Errorf("report of doomed: %+v, want DELETED", r)
	}
	if alive(t, doomed) {
		t.Errorf("process %d of the deleted instance survived Restore", doomed)
	}
	if _, err := os.Stat(filepath.Join(first.workDir, "doomed")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("work dir of the deleted instance: %v, want it gone", err)
	}
	if r := reports["kept"]; r.Status != provider.StatusRunning {
		t.Errorf("report of kept: %+v, want RUNNING", r)
	}
	if got := second.mustPID(t, "kept"); got != kept {
		t.Errorf("PID(kept) = %d, want %d", got, kept)
	}
	poll.UntilWithin(t, waitFor, "the stale process has been stopped", func() bool { return !alive(t, stale.Process.Pid) })
	poll.UntilWithin(t, waitFor, "the stale process is off the record", func() bool {
		return len(readRecordFile(t, first.workDir, "kept").Stale) == 0
	})
}

// A record that cannot be used is logged and left alone; the others are
// restored.
func TestRestore_SkipsUnusableRecords(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	dir := filepath.Join(b.workDir, stateDirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"garbled.json":  "{",
		"mislabel.json": `{"version": 1, "instance_id": "other", "spec": {"argv": ["/bin/true"], "restart_policy": "never"}}`,
		"future.json":   `{"version": 99, "instance_id": "future"}`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b.mustRestore(t, 0)
	if _, err := os.Stat(filepath.Join(dir, "garbled.json")); err != nil {
		t.Errorf("unusable record: %v, want it left alone", err)
	}
}

// statusRecorder is a Steward that accepts a registration, sending it on
// regs, and records status reports on reports.
type statusRecorder struct {
	regs    chan provider.Registration
	reports chan provider.StatusReport
}

func fakeStewardRecording(tb testing.TB) (string, *statusRecorder) {
	tb.Helper()
	rec := &statusRecorder{regs: make(chan provider.Registration, 10), reports: make(chan provider.StatusReport, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/providers":
			var reg provider.Registration
			if err := json.NewDecoder(r.Body).Decode(&reg); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			rec.regs <- reg
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(provider.RegisteredProvider{Registration: reg, ID: "p-1"})
		case r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/status"):
			var rep provider.StatusReport
			if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			rep.InstanceID = strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v1/service-type-instances/"), "/status")
			rec.reports <- rep
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	tb.Cleanup(srv.Close)
	return srv.URL, rec
}

// The environment variables that make this test binary a provider daemon
// (see TestRestore_HelperDaemon).
const (
	helperWorkDirEnv = "STEWARD_TEST_PROVIDER_WORK_DIR"
	helperStewardEnv = "STEWARD_TEST_PROVIDER_STEWARD_URL"
)

// TestRestore_HelperDaemon is not a test: run by
// TestRestore_AfterTheProviderProcessWasKilled as a process of its own, it
// serves a Daemon until killed.
func TestRestore_HelperDaemon(t *testing.T) {
	workDir, stewardURL := os.Getenv(helperWorkDirEnv), os.Getenv(helperStewardEnv)
	if workDir == "" {
		t.Skip("runs only as the provider process of TestRestore_AfterTheProviderProcessWasKilled")
	}
	d := NewDaemon(DaemonConfig{StewardURL: stewardURL, WorkDir: workDir, AllowCommands: []string{AllowAnyCommand},
		AllowRoot: true, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {} // until SIGKILL
}

// A provider process killed with SIGKILL leaves its processes running, as a
// graceful stop does; a provider started later adopts them although they
// are not its children, and supervises them again.
func TestRestore_AfterTheProviderProcessWasKilled(t *testing.T) {
	t.Parallel()
	workDir := filepath.Join(t.TempDir(), "work")
	stewardURL, steward := fakeStewardRecording(t)
	daemon := exec.Command(os.Args[0], "-test.run=^TestRestore_HelperDaemon$", "-test.count=1")
	daemon.Env = append(os.Environ(), helperWorkDirEnv+"="+workDir, helperStewardEnv+"="+stewardURL)
	daemon.Stdout, daemon.Stderr = tbWriter{t}, tbWriter{t}
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = daemon.Process.Kill()
			_ = daemon.Wait()
		}
	})
	timeout := time.NewTimer(waitFor)
	defer timeout.Stop()
	var reg provider.Registration
	select {
	case reg = <-steward.regs:
	case <-timeout.C:
		t.Fatal("the provider process never registered")
	}
	c := provider.NewClient(provider.ClientConfig{Token: reg.CallToken})
	if _, err := c.Create(t.Context(), reg.Endpoint, provider.CreateRequest{InstanceID: "survivor", ServiceType: "container",
		Spec: map[string]any{"process": map[string]any{"command": []string{"/bin/sleep", "600"}}, "restart_policy": "always"}}); err != nil {
		t.Fatal(err)
	}
	for running := false; !running; {
		select {
		case r := <-steward.reports:
			running = r.InstanceID == "survivor" && r.Status == provider.StatusRunning
		case <-timeout.C:
			t.Fatal("the provider process never reported RUNNING")
		}
	}
	var pid int
	poll.UntilWithin(t, waitFor, "the record names the process", func() bool {
		data, err := os.ReadFile(filepath.Join(workDir, stateDirName, "survivor.json"))
		var r record
		if err != nil || json.Unmarshal(data, &r) != nil || len(r.Members) != 1 {
			return false
		}
		pid = r.Members[0].PID
		return pid != 0
	})
	t.Cleanup(func() { killRecorded(t, workDir) }) // whatever runs at the end

	if err := daemon.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = daemon.Wait()
	killed = true
	if !alive(t, pid) {
		t.Fatalf("process %d did not survive the provider process's SIGKILL", pid)
	}

	b := setupOn(t, workDir, nil)
	b.mustRestore(t, 1)
	if r := b.expect(t, "survivor", provider.StatusRunning); !strings.Contains(r.Message, "adopted") {
		t.Errorf("RUNNING report: %q, want it to say the process was adopted", r.Message)
	}
	if got := b.mustPID(t, "survivor"); got != pid {
		t.Fatalf("PID after restore = %d, want the same process %d", got, pid)
	}
	// Not our child: its death is seen through /proc, and its exit status
	// is unknown.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	b.waitNewPID(t, "survivor", pid)
	if in, _ := b.p.Get(context.Background(), "survivor"); !strings.Contains(in.Message, "restarted 1 times") ||
		!strings.Contains(in.Message, "not the provider's child") {
		t.Errorf("Get message %q, want one restart after an exit of unknown status", in.Message)
	}
}
