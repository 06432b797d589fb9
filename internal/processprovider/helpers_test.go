package processprovider

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/pkg/provider"
)

// testNow is the fixed clock of most tests: no run ever lasts
// RestartResetAfter, and every report's ObservedTime is known.
var testNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// waitFor bounds every wait of these tests.
const waitFor = 15 * time.Second

// recorder is a Reporter that records every report on a channel.
type recorder struct {
	ch chan provider.StatusReport
}

func (r *recorder) Report(ctx context.Context, rep provider.StatusReport) error {
	select {
	case r.ch <- rep:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// bundle is one test's provider and what it reported.
type bundle struct {
	p       *Provider
	reports chan provider.StatusReport
	workDir string
}

// setup returns a provider on a fresh work directory with tiny backoffs, a
// quick watch and the fixed clock; mutate may change the config first. The
// provider is stopped when the test ends, and then every process it left
// running is killed.
func setup(tb testing.TB, mutate func(*Config)) *bundle {
	tb.Helper()
	return setupOn(tb, filepath.Join(tb.TempDir(), "work"), mutate)
}

// setupOn is setup on workDir, which an earlier provider may have used.
func setupOn(tb testing.TB, workDir string, mutate func(*Config)) *bundle {
	tb.Helper()
	rec := &recorder{ch: make(chan provider.StatusReport, 1000)}
	cfg := &Config{
		Reporter:          rec,
		Logger:            slog.New(slog.NewTextHandler(tbWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		WorkDir:           workDir,
		AllowCommands:     []string{AllowAnyCommand}, // what these tests run is theirs to choose
		StopGrace:         5 * time.Second,
		RestartBackoff:    time.Millisecond,
		RestartBackoffMax: 5 * time.Millisecond,
		ReportBackoff:     time.Millisecond,
		WatchInterval:     2 * time.Millisecond,
		Now:               func() time.Time { return testNow },
	}
	if mutate != nil {
		mutate(cfg)
	}
	b := &bundle{p: New(cfg), reports: rec.ch, workDir: cfg.WorkDir}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		if err := b.p.Stop(ctx); err != nil {
			tb.Errorf("Stop: %v", err)
		}
		if !cfg.NoOp {
			killRecorded(tb, cfg.WorkDir)
		}
	})
	return b
}

// killRecorded kills, with SIGKILL to their process groups, the processes
// recorded in workDir's records that still run, and reaps those that are
// this test binary's children: a stopped provider leaves them running.
func killRecorded(tb testing.TB, workDir string) {
	tb.Helper()
	dir := filepath.Join(workDir, stateDirName)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // none written: Create writes a record before it starts anything
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			tb.Errorf("read record: %v", err)
			continue
		}
		var r record
		if err := json.Unmarshal(data, &r); err != nil {
			tb.Logf("record %s not decoded (a test's garbage?): %v", e.Name(), err)
			continue
		}
		procs := r.Stale
		for _, m := range r.Members {
			procs = append(procs, m.processRecord)
		}
		for _, pr := range procs {
			killProcess(tb, pr)
		}
	}
}

// killProcess kills the process pr names, if it runs, with its group, and
// reaps it if it is this test binary's child.
func killProcess(tb testing.TB, pr processRecord) {
	tb.Helper()
	proc, _, gone := find(pr.PID, pr.StartTime, pr.BootID)
	if gone {
		return
	}
	proc.signalGroup(syscall.SIGKILL)
	poll.UntilWithin(tb, waitFor, "leftover process "+strconv.Itoa(proc.pid)+" has ended", func() bool {
		_, ended := proc.poll()
		return ended
	})
	if err := proc.killGroup(); err != nil {
		tb.Errorf("leftover process group %d: %v", proc.pid, err)
	}
}

// tbWriter sends log lines to t.Log.
type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Helper()
	w.tb.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// next returns the next report, failing the test if none comes in time.
func (b *bundle) next(tb testing.TB) provider.StatusReport {
	tb.Helper()
	timer := time.NewTimer(waitFor)
	defer timer.Stop()
	select {
	case r := <-b.reports:
		return r
	case <-timer.C:
		tb.Fatal("no status report in time")
		return provider.StatusReport{}
	}
}

// nextFor returns the next report for id, skipping others'.
func (b *bundle) nextFor(tb testing.TB, id string) provider.StatusReport {
	tb.Helper()
	for {
		if r := b.next(tb); r.InstanceID == id {
			return r
		}
	}
}

// expect fails unless the next report for id has status want, and returns it.
func (b *bundle) expect(tb testing.TB, id string, want provider.Status) provider.StatusReport {
	tb.Helper()
	r := b.nextFor(tb, id)
	if r.Status != want {
		tb.Fatalf("report for %s: status %s (%q), want %s", id, r.Status, r.Message, want)
	}
	return r
}

// create calls Create with a spec given as JSON, decoded as the SDK server
// would decode it.
func (b *bundle) create(tb testing.TB, id, specJSON string) (provider.Instance, error) {
	tb.Helper()
	return b.p.Create(context.Background(), provider.CreateRequest{
		InstanceID:  id,
		ServiceType: "container",
		Spec:        decodeSpec(tb, specJSON),
	})
}

// mustCreate is create that fails the test on an error or an answer other
// than PROVISIONING.
func (b *bundle) mustCreate(tb testing.TB, id, specJSON string) {
	tb.Helper()
	in, err := b.create(tb, id, specJSON)
	if err != nil {
		tb.Fatalf("Create(%s): %v", id, err)
	}
	if in.Status != provider.StatusProvisioning || in.InstanceID != id {
		tb.Fatalf("Create(%s) = %+v, want PROVISIONING", id, in)
	}
}

// mustDelete deletes id and waits for its DELETED report.
func (b *bundle) mustDelete(tb testing.TB, id string) {
	tb.Helper()
	in, err := b.p.Delete(context.Background(), id)
	if err != nil {
		tb.Fatalf("Delete(%s): %v", id, err)
	}
	if in.Status != provider.StatusDeleting {
		tb.Fatalf("Delete(%s) = %+v, want DELETING", id, in)
	}
	for {
		if r := b.nextFor(tb, id); r.Status == provider.StatusDeleted {
			return
		}
	}
}

// mustPID returns the instance's running process id.
func (b *bundle) mustPID(tb testing.TB, id string) int {
	tb.Helper()
	pid, ok := b.p.PID(id)
	if !ok {
		tb.Fatalf("PID(%s): no process", id)
	}
	return pid
}

func decodeSpec(tb testing.TB, specJSON string) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(specJSON), &m); err != nil {
		tb.Fatalf("spec %s: %v", specJSON, err)
	}
	return m
}

// alive reports whether pid is a live process (not gone, not a zombie).
func alive(tb testing.TB, pid int) bool {
	tb.Helper()
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false // gone between the two checks
	}
	// The state follows the parenthesised command name.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

// lines returns the lines of a file in the instance's work dir, none if the
// file does not exist yet.
func (b *bundle) lines(tb testing.TB, id, name string) []string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(b.workDir, id, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Fields(string(data))
}

// advancingClock returns a Now that moves by step on every call.
func advancingClock(step time.Duration) func() time.Time {
	var calls atomic.Int64
	return func() time.Time { return testNow.Add(time.Duration(calls.Add(1)) * step) }
}
