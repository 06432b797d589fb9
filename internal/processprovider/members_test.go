package processprovider

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/pkg/provider"
)

func TestMembers_RunAsSeparateProcesses(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, nil)
	const id = "trio"
	c.mustCreateOrder(t, id, sleepers(threeMembers))

	r := c.waitRuntime(t, id, "healthy", func(st provider.RuntimeState) bool { return st.Health == provider.RuntimeHealthy })
	want := provider.RuntimeState{Health: provider.RuntimeHealthy, RepairAvailable: new(true), QuorumSafe: new(true),
		Members: []provider.Member{
			{ID: "server-0", Role: "server", Health: "healthy"},
			{ID: "agent-0", Role: "agent", Health: "healthy"},
			{ID: "agent-1", Role: "agent", Health: "healthy"},
		}}
	if diff := cmp.Diff(want, r.RuntimeState, ignoreMessages); diff != "" {
		t.Errorf("runtime (-want +got):\n%s", diff)
	}
	c.rt.mu.Lock()
	call := c.rt.runtime[0]
	c.rt.mu.Unlock()
	if call.project != testProject || call.appInstanceID != orderOf(id) || !call.report.ObservedTime.Equal(testNow) {
		t.Errorf("runtime reported for %s/%s at %v, want the order's project and id, at Config.Now",
			call.project, call.appInstanceID, call.report.ObservedTime)
	}

	pids := map[int]string{}
	for _, m := range []struct{ id, role string }{{"server-0", "server"}, {"agent-0", "agent"}, {"agent-1", "agent"}} {
		pid := c.mustMemberPID(t, id, m.id)
		if !alive(t, pid) {
			t.Errorf("%s: process %d is not running", m.id, pid)
		}
		if other, dup := pids[pid]; dup {
			t.Errorf("%s and %s share pid %d", m.id, other, pid)
		}
		pids[pid] = m.id
		env := c.envOf(t, id, m.id)
		wantEnv := map[string]string{"STEWARD_MEMBER_ID": m.id, "STEWARD_MEMBER_ROLE": m.role,
			"STEWARD_INSTANCE_ID": id, "HOME": c.memberDir(id, m.id)}
		for k, v := range wantEnv {
			if env[k] != v {
				t.Errorf("%s: $%s = %q, want %q", m.id, k, env[k], v)
			}
		}
		if _, err := os.Stat(filepath.Join(c.memberDir(id, m.id), "stdout.log")); err != nil {
			t.Errorf("%s: stdout.log: %v", m.id, err)
		}
	}
	if _, ok := c.p.PID(id); ok {
		t.Error("PID of an instance with members: a process, want none (MemberPID answers)")
	}
	if got, err := c.p.Get(context.Background(), id); err != nil || got.Status != provider.StatusRunning {
		t.Errorf("Get = %+v, %v; want RUNNING", got, err)
	}

	c.mustDelete(t, id)
	for pid, m := range pids {
		if alive(t, pid) {
			t.Errorf("%s: process %d survived the delete", m, pid)
		}
	}
	if _, err := os.Stat(filepath.Join(c.workDir, id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("work dir after DELETED: stat err = %v, want not exist", err)
	}
}

func TestMembers_KilledMemberFailsItNotTheInstance(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, nil)
	const id = "wounded"
	c.mustCreateOrder(t, id, sleepers(threeMembers))
	c.waitRuntime(t, id, "healthy", func(st provider.RuntimeState) bool { return st.Health == provider.RuntimeHealthy })

	if err := syscall.Kill(c.mustMemberPID(t, id, "agent-0"), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := c.waitRuntime(t, id, "degraded", func(st provider.RuntimeState) bool { return st.Health == provider.RuntimeDegraded })
	if h := memberHealth(r.RuntimeState, "agent-0"); h != provider.RuntimeFailed {
		t.Errorf("agent-0 health = %s, want failed", h)
	}
	if !strings.Contains(r.Members[1].Message, "killed by signal 9") {
		t.Errorf("agent-0 message = %q, want it to name the signal", r.Members[1].Message)
	}
	if !*r.QuorumSafe || !*r.RepairAvailable {
		t.Errorf("quorum_safe %v, repair_available %v; want both: the server is healthy", *r.QuorumSafe, *r.RepairAvailable)
	}
	got, err := c.p.Get(context.Background(), id)
	if err != nil || got.Status != provider.StatusRunning || !strings.Contains(got.Message, "agent-0") {
		t.Errorf("Get = %+v, %v; want RUNNING, naming agent-0", got, err)
	}

	// Without a healthy server the runtime has failed; the instance is
	// still RUNNING: its members are the runtime's business.
	if err := syscall.Kill(c.mustMemberPID(t, id, "server-0"), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r = c.waitRuntime(t, id, "failed", func(st provider.RuntimeState) bool { return st.Health == provider.RuntimeFailed })
	if *r.QuorumSafe || !*r.RepairAvailable {
		t.Errorf("quorum_safe %v, repair_available %v; want false, true", *r.QuorumSafe, *r.RepairAvailable)
	}
	if got, _ := c.p.Get(context.Background(), id); got.Status != provider.StatusRunning {
		t.Errorf("Get = %+v, want RUNNING", got)
	}
	// Stop drains every report: no status report came after RUNNING, and
	// Stop reports none (it leaves the processes running).
	if err := c.p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-c.reports:
		t.Errorf("report after RUNNING: %+v, want none", r)
	default:
	}
}

func TestMembers_NoRuntimeReportsWithoutMembersOrOrder(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, nil)
	// Without members: one process, no runtime.
	c.mustCreateOrder(t, "single", `{"process": {"command": ["/bin/sleep", "300"]}}`)
	// With members but no order metadata: nowhere to report to.
	c.mustCreate(t, "anonymous", sleepers(threeMembers))
	c.expect(t, "anonymous", provider.StatusRunning)

	if err := c.p.Stop(context.Background()); err != nil { // drains every report
		t.Fatal(err)
	}
	c.rt.mu.Lock()
	defer c.rt.mu.Unlock()
	if len(c.rt.runtime) != 0 {
		t.Errorf("runtime reports %+v, want none", c.rt.runtime)
	}
}

func TestMembers_StartFailureFailsInstance(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, nil)
	const id = "missing"
	c.mustCreate(t, id, `{"process": {"command": ["/nonexistent/steward-test-command"]}, "members": `+threeMembers+`}`)
	r := c.expect(t, id, provider.StatusFailed)
	if !strings.Contains(r.Message, "member ") || !strings.Contains(r.Message, "no such file or directory") {
		t.Errorf("FAILED message %q, want it to name a member and the error", r.Message)
	}
	c.mustDelete(t, id)
}

func TestMembers_UpdateRestartsEveryMember(t *testing.T) {
	t.Parallel()
	c := setupCluster(t, nil)
	const id = "renewed"
	c.mustCreateOrder(t, id, sleepers(threeMembers))
	old := map[string]int{}
	for _, m := range []string{"server-0", "agent-0", "agent-1"} {
		old[m] = c.mustMemberPID(t, id, m)
	}

	// A new member list: agent-1 goes, agent-2 comes.
	c.mustUpdate(t, id, sleepers(`[{"id": "server-0", "role": "server"}, {"id": "agent-0", "role": "agent"}, {"id": "agent-2", "role": "agent"}]`))
	c.expect(t, id, provider.StatusProvisioning)
	c.expect(t, id, provider.StatusRunning)
	for _, m := range []string{"server-0", "agent-0", "agent-2"} {
		if pid := c.mustMemberPID(t, id, m); pid == old[m] || !alive(t, pid) {
			t.Errorf("%s: pid %d after the update (was %d), want a new, live process", m, pid, old[m])
		}
	}
	for m, pid := range old {
		if alive(t, pid) {
			t.Errorf("%s: old process %d survived the update", m, pid)
		}
	}
	if _, ok := c.p.MemberPID(id, "agent-1"); ok {
		t.Error("MemberPID(agent-1): a removed member still has a process")
	}
	c.waitRuntime(t, id, "agent-2 healthy", func(st provider.RuntimeState) bool {
		return memberHealth(st, "agent-2") == provider.RuntimeHealthy && memberHealth(st, "agent-1") == ""
	})

	// Members cannot be taken away: that is another kind of instance.
	_, err := c.update(t, id, `{"process": {"command": ["/bin/sleep", "300"]}}`)
	ie, ok := errors.AsType[*RequestError](err)
	if !ok || ie.Invalid.Fields[0].Field != "spec.members" {
		t.Errorf("Update without members: err = %v, want a RequestError on spec.members", err)
	}
}

// ignoreMessages leaves member messages (pids, restart counts) out of a
// comparison of runtime states.
var ignoreMessages = cmp.FilterPath(func(p cmp.Path) bool {
	return p.Last().String() == ".Message"
}, cmp.Ignore())
