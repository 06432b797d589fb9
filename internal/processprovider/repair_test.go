package processprovider

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/pkg/provider"
)

// degraded creates id with three sleeping members, kills agent-0, and
// waits until the runtime report says it failed. It returns agent-0's old
// pid.
func (c *cluster) degraded(tb testing.TB, id string) int {
	tb.Helper()
	c.mustCreateOrder(tb, id, sleepers(threeMembers))
	pid := c.mustMemberPID(tb, id, "agent-0")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		tb.Fatal(err)
	}
	c.waitRuntime(tb, id, "agent-0 failed", func(st provider.RuntimeState) bool {
		return memberHealth(st, "agent-0") == provider.RuntimeFailed
	})
	return pid
}

// createSleepers creates id with three sleeping members and waits until
// each has logged its start, so a restart cannot kill one before.
func (c *cluster) createSleepers(tb testing.TB, id string) {
	tb.Helper()
	c.mustCreateOrder(tb, id, sleepers(threeMembers))
	for _, m := range []string{"server-0", "agent-0", "agent-1"} {
		c.waitStarts(tb, id, m, 1)
	}
}

// waitStarts waits until member memberID of id has logged n starts, and
// fails tb if it logged more.
func (c *cluster) waitStarts(tb testing.TB, id, memberID string, n int) {
	tb.Helper()
	var got int
	poll.UntilWithin(tb, waitFor, memberID+" has logged its starts", func() bool {
		got = len(c.memberLines(tb, id, memberID, "starts.txt"))
		return got >= n
	})
	if got != n {
		tb.Errorf("%s started %d times, want %d", memberID, got, n)
	}
}

func TestRepair_MemberRestartsFailedMember(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, nil)
	const id = "mended"
	oldPID := c.degraded(t, id)
	server := c.mustMemberPID(t, id, "server-0")

	c.mustRepair(t, id, "op-1", "repair", "member", "agent-0")
	final := c.waitRepair(t, "op-1")

	want := map[string]string{
		"precheck": "succeeded", "runtime_state_discovery": "succeeded", "member_health_check": "succeeded",
		"service_reconcile": "succeeded", "certificate_or_kubeconfig_reconcile": "skipped",
		"endpoint_reconcile": "succeeded", "post_repair_health_check": "succeeded", "report_status": "succeeded",
	}
	if diff := cmp.Diff(want, stepStatuses(final)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if final.Status != provider.RepairSucceeded || final.Error != nil {
		t.Errorf("final = %s %+v, want succeeded without error", final.Status, final.Error)
	}
	if final.RuntimeState == nil || final.RuntimeState.Health != provider.RuntimeHealthy {
		t.Errorf("final runtime_state = %+v, want healthy", final.RuntimeState)
	}
	if s := step(t, final, "runtime_state_discovery"); !strings.Contains(s.Message, "2 of 3 members run") {
		t.Errorf("discovery message %q, want it to count the running members", s.Message)
	}
	if s := step(t, final, "member_health_check"); !strings.Contains(s.Message, "agent-0") {
		t.Errorf("health check message %q, want it to name agent-0", s.Message)
	}
	if s := step(t, final, "service_reconcile"); s.StartedAt == nil || s.FinishedAt == nil {
		t.Errorf("service_reconcile = %+v, want start and finish times", s)
	}

	newPID := c.mustMemberPID(t, id, "agent-0")
	if newPID == oldPID || !alive(t, newPID) {
		t.Errorf("agent-0 pid %d after repair (was %d), want a new, live process", newPID, oldPID)
	}
	if got := c.mustMemberPID(t, id, "server-0"); got != server {
		t.Errorf("server-0 pid %d after repair, want %d: a repair leaves healthy members alone", got, server)
	}
	c.waitRuntime(t, id, "healthy", func(st provider.RuntimeState) bool { return st.Health == provider.RuntimeHealthy })
	calls := c.rt.repairsOf("op-1")
	if got := calls[len(calls)-1].req; got.Token != "token-op-1" || !strings.HasSuffix(got.ReportPath, "/op-1/report") {
		t.Errorf("reported with %+v, want the operation's token and report path", got)
	}
}

func TestRepair_ReconcileLeavesMemberAndWritesEndpoint(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, nil)
	const id = "reconciled"
	c.degraded(t, id)

	c.mustRepair(t, id, "op-1", "reconcile", "whole_runtime", "")
	final := c.waitRepair(t, "op-1")
	if final.Status != provider.RepairSucceeded {
		t.Fatalf("final = %s %+v, want succeeded", final.Status, final.Error)
	}
	if s := step(t, final, "service_reconcile"); s.Status != provider.RepairSkipped || !strings.Contains(s.Message, "non-destructive") {
		t.Errorf("service_reconcile = %+v, want skipped as non-destructive", s)
	}
	if s := step(t, final, "post_repair_health_check"); s.Status != provider.RepairSucceeded || !strings.Contains(s.Message, "agent-0") {
		t.Errorf("post_repair_health_check = %+v, want succeeded, naming agent-0", s)
	}
	if final.RuntimeState.Health != provider.RuntimeDegraded {
		t.Errorf("final runtime health %s, want degraded: reconcile restarts nothing", final.RuntimeState.Health)
	}
	if _, ok := c.p.MemberPID(id, "agent-0"); ok {
		t.Error("agent-0 runs after a reconcile, want it left dead")
	}

	data, err := os.ReadFile(filepath.Join(c.workDir, id, "endpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ep struct {
		InstanceID string `json:"instance_id"`
		Members    []struct {
			ID      string `json:"id"`
			Role    string `json:"role"`
			PID     int    `json:"pid"`
			Healthy bool   `json:"healthy"`
		} `json:"members"`
		ObservedTime time.Time `json:"observed_time"`
	}
	if err := json.Unmarshal(data, &ep); err != nil {
		t.Fatalf("endpoint.json: %v\n%s", err, data)
	}
	if ep.InstanceID != id || len(ep.Members) != 3 || !ep.ObservedTime.Equal(testNow) {
		t.Errorf("endpoint.json = %s", data)
	}
	for _, m := range ep.Members {
		wantHealthy := m.ID != "agent-0"
		if m.Healthy != wantHealthy || (m.PID != 0) != wantHealthy {
			t.Errorf("endpoint member %+v, want healthy %v with a pid only if so", m, wantHealthy)
		}
	}
}

func TestRepair_RestartRestartsEveryMemberInScope(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, nil)
	const id = "restarted"
	c.createSleepers(t, id)
	old := map[string]int{}
	for _, m := range []string{"server-0", "agent-0", "agent-1"} {
		old[m] = c.mustMemberPID(t, id, m)
	}

	c.mustRepair(t, id, "op-1", "restart", "whole_runtime", "")
	final := c.waitRepair(t, "op-1")
	if final.Status != provider.RepairSucceeded {
		t.Fatalf("final = %s %+v, want succeeded", final.Status, final.Error)
	}
	for m, pid := range old {
		if now := c.mustMemberPID(t, id, m); now == pid || !alive(t, now) || alive(t, pid) {
			t.Errorf("%s: pid %d after restart (was %d), want a new, live process and the old one gone", m, now, pid)
		}
		c.waitStarts(t, id, m, 2)
	}
}

func TestRepair_UnknownMemberFailsAndSkipsTheRest(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, nil)
	const id = "targeted"
	c.mustCreateOrder(t, id, sleepers(threeMembers))

	c.mustRepair(t, id, "op-1", "repair", "member", "agent-9")
	final := c.waitRepair(t, "op-1")
	if final.Status != provider.RepairFailed || final.Error == nil || final.Error.Code != RepairCodeMemberNotFound {
		t.Fatalf("final = %s %+v, want failed MEMBER_NOT_FOUND", final.Status, final.Error)
	}
	if !strings.Contains(final.Error.Message, "agent-9") {
		t.Errorf("error message %q, want it to name the target", final.Error.Message)
	}
	for i, s := range final.Steps {
		want, wantMsg := provider.RepairSkipped, "preceding step failed"
		switch s.Name {
		case "precheck":
			want, wantMsg = provider.RepairFailed, "agent-9"
		case "report_status":
			want, wantMsg = provider.RepairSucceeded, "runtime reported"
		}
		if s.Status != want || !strings.Contains(s.Message, wantMsg) {
			t.Errorf("step %d %s = %s %q, want %s containing %q", i, s.Name, s.Status, s.Message, want, wantMsg)
		}
	}
	if final.RuntimeState == nil || final.RuntimeState.Health != provider.RuntimeHealthy {
		t.Errorf("final runtime_state = %+v, want healthy", final.RuntimeState)
	}
}

func TestRepair_UnsupportedActionFails(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, nil)
	const id = "misdirected"
	c.mustCreateOrder(t, id, sleepers(threeMembers))
	c.mustRepair(t, id, "op-1", "reinstall", "whole_runtime", "")
	if final := c.waitRepair(t, "op-1"); final.Error == nil || final.Error.Code != RepairCodeUnsupportedAction {
		t.Errorf("final = %s %+v, want failed UNSUPPORTED_ACTION", final.Status, final.Error)
	}
}

func TestRepair_RedeliveryStartsNothing(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, nil)
	const id = "redelivered"
	c.createSleepers(t, id)
	c.mustRepair(t, id, "op-1", "restart", "member", "agent-0")
	first := c.waitRepair(t, "op-1")
	pid := c.mustMemberPID(t, id, "agent-0")
	c.waitStarts(t, id, "agent-0", 2)
	reports := len(c.rt.repairsOf("op-1"))

	acc, err := c.p.Repair(context.Background(), provider.RepairRequest{InstanceID: id, OperationID: "op-1",
		Action: "restart", Scope: "member", TargetMemberID: "agent-0", ReportPath: "/report", Token: "newer"})
	if err != nil || acc != (provider.RepairAccepted{OperationID: "op-1", Status: provider.RepairSucceeded}) {
		t.Fatalf("redelivered Repair = %+v, %v; want op-1 as it ended, succeeded", acc, err)
	}
	// The finished operation's final report goes again, with the newer
	// token, in case the first was lost.
	var again []repairCall
	poll.UntilWithin(t, waitFor, "the final report was sent again", func() bool {
		again = c.rt.repairsOf("op-1")
		return len(again) > reports
	})
	if last := again[len(again)-1]; last.req.Token != "newer" || !cmp.Equal(last.report, first) {
		t.Errorf("report after redelivery with token %q: %+v, want the final report %+v with token newer", last.req.Token, last.report, first)
	}
	if now := c.mustMemberPID(t, id, "agent-0"); now != pid {
		t.Errorf("agent-0 pid %d after redelivery, want %d: nothing restarted", now, pid)
	}
}

func TestRepair_ConcurrentOperationIsConflict(t *testing.T) {
	t.Parallel()
	// An hour's settle holds the first operation until Stop ends it.
	c := setupCluster(t, func(cfg *Config) { cfg.RepairSettle = time.Hour })
	const id = "busy"
	c.createSleepers(t, id)
	c.mustRepair(t, id, "op-1", "restart", "member", "agent-0")
	poll.UntilWithin(t, waitFor, "op-1 is settling", func() bool {
		calls := c.rt.repairsOf("op-1")
		return len(calls) > 0 && step(t, calls[len(calls)-1].report, "post_repair_health_check").Status == provider.RepairRunning
	})
	c.waitStarts(t, id, "agent-0", 2)
	pid := c.mustMemberPID(t, id, "agent-0")

	_, err := c.repair(id, "op-2", "repair", "whole_runtime", "")
	var status interface{ HTTPStatus() int }
	var reason interface{ ProblemReason() string }
	if !errors.Is(err, ErrRepairInProgress) || !errors.As(err, &status) || status.HTTPStatus() != http.StatusConflict ||
		!errors.As(err, &reason) || reason.ProblemReason() != "REPAIR_IN_PROGRESS" {
		t.Errorf("second operation: err = %v, want ErrRepairInProgress answering 409 REPAIR_IN_PROGRESS", err)
	}
	// A redelivery of the running one is no second operation.
	acc, err := c.p.Repair(context.Background(), provider.RepairRequest{InstanceID: id, OperationID: "op-1",
		Action: "restart", Scope: "member", TargetMemberID: "agent-0", ReportPath: "/report", Token: "newer"})
	if err != nil || acc.Status != provider.RepairRunning {
		t.Errorf("redelivered Repair = %+v, %v; want running", acc, err)
	}

	// Stop ends the operation, failed, and waits for its final report.
	if err := c.p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls := c.rt.repairsOf("op-1")
	last := calls[len(calls)-1]
	if last.report.Status != provider.RepairFailed || last.report.Error.Code != RepairCodeProviderStopped || last.req.Token != "newer" {
		t.Errorf("final report %s %+v with token %q, want failed PROVIDER_STOPPED with token newer",
			last.report.Status, last.report.Error, last.req.Token)
	}
	if s := step(t, last.report, "report_status"); s.Status != provider.RepairSucceeded {
		t.Errorf("report_status = %+v, want it run despite the failure", s)
	}
	if got := len(c.memberLines(t, id, "agent-0", "starts.txt")); got != 2 {
		t.Errorf("agent-0 started %d times, want 2: the redelivery restarted nothing", got)
	}
	// The restarted process is the member's now, and like every process
	// it is left running by Stop, for the next provider to adopt.
	if !alive(t, pid) {
		t.Errorf("agent-0's process %d did not survive Stop", pid)
	}
}

func TestRepair_RestartedMemberDyingAgainFails(t *testing.T) {
	t.Parallel()
	// Long enough for the restarted process to have died and been reaped.
	c := setupCluster(t, func(cfg *Config) { cfg.RepairSettle = time.Second })
	const id = "relapsed"
	c.mustCreateOrder(t, id, `{"process": {"command": ["/bin/sh", "-c", "test -e die && exit 1; exec /bin/sleep 300"]},
		"restart_policy": "never", "members": `+threeMembers+`}`)
	if err := os.WriteFile(filepath.Join(c.memberDir(id, "agent-0"), "die"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	c.mustRepair(t, id, "op-1", "restart", "member", "agent-0")
	final := c.waitRepair(t, "op-1")
	if final.Status != provider.RepairFailed || final.Error.Code != RepairCodeMemberUnhealthyAfterRepair {
		t.Fatalf("final = %s %+v, want failed MEMBER_UNHEALTHY_AFTER_REPAIR", final.Status, final.Error)
	}
	if !strings.Contains(final.Error.Message, "agent-0") {
		t.Errorf("error message %q, want it to name agent-0", final.Error.Message)
	}
	if final.RuntimeState.Health != provider.RuntimeDegraded {
		t.Errorf("final runtime health %s, want degraded", final.RuntimeState.Health)
	}
	// A failed repair leaves the instance as it is.
	if got, _ := c.p.Get(context.Background(), id); got.Status != provider.StatusRunning {
		t.Errorf("Get = %+v, want RUNNING", got)
	}
}

func TestRepair_InstanceWithoutMembersIsOneServer(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, nil)
	const id = "lonely"
	c.mustCreateOrder(t, id, `{"process": {"command": ["/bin/sleep", "300"]}, "restart_policy": "never"}`)
	pid := c.mustPID(t, id)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.expect(t, id, provider.StatusFailed)

	c.mustRepair(t, id, "op-1", "repair", "member", "main")
	final := c.waitRepair(t, "op-1")
	if final.Status != provider.RepairSucceeded {
		t.Fatalf("final = %s %+v, want succeeded", final.Status, final.Error)
	}
	want := &provider.RuntimeState{Health: provider.RuntimeHealthy, RepairAvailable: new(true), QuorumSafe: new(true),
		Members: []provider.Member{{ID: "main", Role: "server", Health: "healthy"}}}
	if diff := cmp.Diff(want, final.RuntimeState, ignoreMessages); diff != "" {
		t.Errorf("final runtime_state (-want +got):\n%s", diff)
	}
	// Its process runs again, and so does the instance.
	c.expect(t, id, provider.StatusRunning)
	if now := c.mustPID(t, id); now == pid || !alive(t, now) {
		t.Errorf("pid %d after repair (was %d), want a new, live process", now, pid)
	}
	if got, _ := c.p.MemberPID(id, "main"); got != c.mustPID(t, id) {
		t.Errorf("MemberPID(main) = %d, want PID's", got)
	}
	if len(c.rt.runtimeOf(orderOf(id))) != 0 {
		t.Error("runtime reports for an instance without members, want none")
	}
}

func TestRepair_Refused(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, nil)
	if _, err := c.repair("never-created", "op-1", "repair", "whole_runtime", ""); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("Repair of an unknown instance: err = %v, want ErrNotFound", err)
	}
	c.mustCreateOrder(t, "held", sleepers(threeMembers))
	if _, err := c.repair("held", "", "repair", "whole_runtime", ""); !errors.As(err, new(*RequestError)) {
		t.Errorf("Repair without an operation id: err = %v, want *RequestError", err)
	}
	if err := c.p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.repair("held", "op-1", "repair", "whole_runtime", ""); !errors.Is(err, ErrStopped) {
		t.Errorf("Repair after Stop: err = %v, want ErrStopped", err)
	}
}

func TestRepair_NoOp(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, func(cfg *Config) { cfg.NoOp, cfg.WorkDir = true, "" })
	const id = "imaginary"
	c.mustCreateOrder(t, id, `{"members": `+threeMembers+`}`)
	c.waitRuntime(t, id, "healthy", func(st provider.RuntimeState) bool { return st.Health == provider.RuntimeHealthy })

	c.mustRepair(t, id, "op-1", "restart", "whole_runtime", "")
	final := c.waitRepair(t, "op-1")
	want := map[string]string{
		"precheck": "succeeded", "runtime_state_discovery": "succeeded", "member_health_check": "succeeded",
		"service_reconcile": "skipped", "certificate_or_kubeconfig_reconcile": "skipped",
		"endpoint_reconcile": "skipped", "post_repair_health_check": "skipped", "report_status": "succeeded",
	}
	if diff := cmp.Diff(want, stepStatuses(final)); diff != "" || final.Status != provider.RepairSucceeded {
		t.Errorf("final %s, steps (-want +got):\n%s", final.Status, diff)
	}
}

func TestRepair_OverHTTP(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, func(cfg *Config) { cfg.RepairSettle = time.Hour }) // op-1 runs until Stop
	const id = "remote"
	c.mustCreateOrder(t, id, sleepers(threeMembers))
	srv := httptest.NewServer(provider.NewServer(c.p, provider.ServerConfig{}))
	t.Cleanup(srv.Close)
	client := provider.NewClient(provider.ClientConfig{})
	req := provider.RepairRequest{InstanceID: id, OperationID: "op-1", AppInstanceID: orderOf(id), Project: testProject,
		Action: "restart", Scope: "member", TargetMemberID: "agent-0", ReportPath: "/report", Token: "t"}

	acc, err := client.Repair(t.Context(), srv.URL, req)
	if err != nil || acc != (provider.RepairAccepted{OperationID: "op-1", Status: provider.RepairRunning}) {
		t.Fatalf("Repair over HTTP = %+v, %v; want 202 running", acc, err)
	}
	second := req
	second.OperationID = "op-2"
	_, err = client.Repair(t.Context(), srv.URL, second)
	var re *provider.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusConflict {
		t.Fatalf("second operation over HTTP: err = %v, want 409", err)
	}
	if p, _ := re.Problem(); p.Reason != "REPAIR_IN_PROGRESS" {
		t.Errorf("problem reason %q, want REPAIR_IN_PROGRESS", p.Reason)
	}
	unknown := req
	unknown.InstanceID = "never-created"
	if _, err := client.Repair(t.Context(), srv.URL, unknown); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("Repair of an unknown instance over HTTP: err = %v, want ErrNotFound", err)
	}
}
