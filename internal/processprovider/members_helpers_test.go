package processprovider

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/pkg/provider"
)

// testProject is the project of the orders of these tests.
const testProject = "proj"

// runtimeRecorder is a RuntimeReporter that records every report.
type runtimeRecorder struct {
	mu      sync.Mutex
	runtime []runtimeCall
	repairs []repairCall
}

type runtimeCall struct {
	project, appInstanceID string
	report                 provider.RuntimeReport
}

type repairCall struct {
	req    provider.RepairRequest
	report provider.RepairReport
}

func (r *runtimeRecorder) ReportRuntime(_ context.Context, project, appInstanceID string, rep provider.RuntimeReport) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runtime = append(r.runtime, runtimeCall{project: project, appInstanceID: appInstanceID, report: rep})
	return nil
}

func (r *runtimeRecorder) ReportRepair(_ context.Context, req provider.RepairRequest, rep provider.RepairReport) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.repairs = append(r.repairs, repairCall{req: req, report: rep})
	return nil
}

// runtimeOf returns the runtime reports for order appID so far.
func (r *runtimeRecorder) runtimeOf(appID string) []provider.RuntimeReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []provider.RuntimeReport
	for _, c := range r.runtime {
		if c.appInstanceID == appID {
			out = append(out, c.report)
		}
	}
	return out
}

// repairsOf returns the reports on operation opID so far.
func (r *runtimeRecorder) repairsOf(opID string) []repairCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []repairCall
	for _, c := range r.repairs {
		if c.req.OperationID == opID {
			out = append(out, c)
		}
	}
	return out
}

// cluster is a bundle whose provider reports runtimes to rt.
type cluster struct {
	*bundle
	rt *runtimeRecorder
}

// setupCluster is setup with a runtime recorder and a short repair settle.
func setupCluster(tb testing.TB, mutate func(*Config)) *cluster {
	tb.Helper()
	rt := &runtimeRecorder{}
	b := setup(tb, func(c *Config) {
		c.Runtime, c.RepairSettle = rt, 10*time.Millisecond
		if mutate != nil {
			mutate(c)
		}
	})
	return &cluster{bundle: b, rt: rt}
}

// orderOf is the order id the tests give instance id.
func orderOf(id string) string { return "order-" + id }

// mustCreateOrder creates id with the order metadata runtime reports need
// and waits for RUNNING.
func (c *cluster) mustCreateOrder(tb testing.TB, id, specJSON string) {
	tb.Helper()
	in, err := c.p.Create(context.Background(), provider.CreateRequest{
		InstanceID: id, ServiceType: "process-cluster", Spec: decodeSpec(tb, specJSON),
		Metadata: provider.CreateMetadata{Project: testProject, OrderID: orderOf(id)},
	})
	if err != nil || in.Status != provider.StatusProvisioning {
		tb.Fatalf("Create(%s) = %+v, %v; want PROVISIONING", id, in, err)
	}
	c.expect(tb, id, provider.StatusRunning)
}

// sleepers is the spec of members that log their starts and environment,
// then sleep, under restart_policy never.
func sleepers(members string) string {
	return `{"process": {"command": ["/bin/sh", "-c", "echo started >> starts.txt; env > env.tmp; mv env.tmp env.txt; exec /bin/sleep 300"]},
		"restart_policy": "never", "members": ` + members + `}`
}

// threeMembers are one server and two agents.
const threeMembers = `[{"id": "server-0", "role": "server"}, {"id": "agent-0", "role": "agent"}, {"id": "agent-1", "role": "agent"}]`

// memberDir is the directory of a member of instance id.
func (c *cluster) memberDir(id, memberID string) string {
	return filepath.Join(c.workDir, id, "members", memberID)
}

// memberLines returns the words of a file in a member's directory.
func (c *cluster) memberLines(tb testing.TB, id, memberID, name string) []string {
	tb.Helper()
	return c.lines(tb, filepath.Join(id, "members", memberID), name)
}

// mustMemberPID returns the member's running process id.
func (c *cluster) mustMemberPID(tb testing.TB, id, memberID string) int {
	tb.Helper()
	pid, ok := c.p.MemberPID(id, memberID)
	if !ok {
		tb.Fatalf("MemberPID(%s, %s): no process", id, memberID)
	}
	return pid
}

// waitRuntime waits until the newest runtime report of instance id
// satisfies cond, and returns it.
func (c *cluster) waitRuntime(tb testing.TB, id, what string, cond func(provider.RuntimeState) bool) provider.RuntimeReport {
	tb.Helper()
	var last provider.RuntimeReport
	poll.UntilWithin(tb, waitFor, "the runtime report says "+what, func() bool {
		rs := c.rt.runtimeOf(orderOf(id))
		if len(rs) == 0 {
			return false
		}
		last = rs[len(rs)-1]
		return cond(last.RuntimeState)
	})
	return last
}

// memberHealth returns the health of member id in st, "" if it is absent.
func memberHealth(st provider.RuntimeState, id string) string {
	for _, m := range st.Members {
		if m.ID == id {
			return m.Health
		}
	}
	return ""
}

// repair calls Repair for an operation on instance id.
func (c *cluster) repair(id, opID, action, scope, target string) (provider.RepairAccepted, error) {
	return c.p.Repair(context.Background(), provider.RepairRequest{
		InstanceID: id, OperationID: opID, AppInstanceID: orderOf(id), Project: testProject,
		ServiceType: "process-cluster", Action: action, Scope: scope, TargetMemberID: target,
		ReportPath: "/api/v1/projects/" + testProject + "/app-instances/" + orderOf(id) + "/repair-operations/" + opID + "/report",
		Token:      "token-" + opID,
	})
}

// mustRepair is repair that fails the test unless the operation is
// accepted, running.
func (c *cluster) mustRepair(tb testing.TB, id, opID, action, scope, target string) {
	tb.Helper()
	acc, err := c.repair(id, opID, action, scope, target)
	if err != nil || acc != (provider.RepairAccepted{OperationID: opID, Status: provider.RepairRunning}) {
		tb.Fatalf("Repair(%s) = %+v, %v; want accepted, running", opID, acc, err)
	}
}

// waitRepair waits for the final report on operation opID, checks that the
// reports before it progressed step by step (see checkProgress), and
// returns the final one.
func (c *cluster) waitRepair(tb testing.TB, opID string) provider.RepairReport {
	tb.Helper()
	var calls []repairCall
	poll.UntilWithin(tb, waitFor, "operation "+opID+" has finished", func() bool {
		calls = c.rt.repairsOf(opID)
		return len(calls) > 0 && calls[len(calls)-1].report.Status != provider.RepairRunning
	})
	reports := make([]provider.RepairReport, len(calls))
	for i, call := range calls {
		reports[i] = call.report
	}
	checkProgress(tb, reports)
	return reports[len(reports)-1]
}

// stepRank orders step statuses: a step only moves up.
var stepRank = map[string]int{
	provider.RepairPending: 0, provider.RepairRunning: 1,
	provider.RepairSucceeded: 2, provider.RepairFailed: 2, provider.RepairSkipped: 2,
}

// checkProgress fails tb unless every report lists the seed's steps in
// order, steps run one after the other (none starts before the ones before
// it ended), no step moves back or changes once ended, and only the last
// report is final.
func checkProgress(tb testing.TB, reports []provider.RepairReport) {
	tb.Helper()
	var prev []provider.RepairStep
	for n, r := range reports {
		var names []string
		for _, s := range r.Steps {
			names = append(names, s.Name)
		}
		if !slices.Equal(names, provider.RepairStepNames) {
			tb.Fatalf("report %d steps %v, want %v", n, names, provider.RepairStepNames)
		}
		if final := r.Status != provider.RepairRunning; final != (n == len(reports)-1) {
			tb.Fatalf("report %d of %d has status %s", n+1, len(reports), r.Status)
		}
		for i, s := range r.Steps {
			if stepRank[s.Status] > 0 {
				for _, before := range r.Steps[:i] {
					if stepRank[before.Status] < 2 {
						tb.Fatalf("report %d: step %s is %s while %s is %s", n, s.Name, s.Status, before.Name, before.Status)
					}
				}
			}
			if prev != nil {
				was := prev[i]
				if stepRank[s.Status] < stepRank[was.Status] || (stepRank[was.Status] == 2 && s.Status != was.Status) {
					tb.Fatalf("report %d: step %s went from %s to %s", n, s.Name, was.Status, s.Status)
				}
			}
		}
		prev = r.Steps
	}
}

// stepStatuses maps each step of r to its status.
func stepStatuses(r provider.RepairReport) map[string]string {
	out := map[string]string{}
	for _, s := range r.Steps {
		out[s.Name] = s.Status
	}
	return out
}

// step returns the step of r named name.
func step(tb testing.TB, r provider.RepairReport, name string) provider.RepairStep {
	tb.Helper()
	for _, s := range r.Steps {
		if s.Name == name {
			return s
		}
	}
	tb.Fatalf("no step %s", name)
	return provider.RepairStep{}
}

// envOf reads the environment a member's process wrote to env.txt.
func (c *cluster) envOf(tb testing.TB, id, memberID string) map[string]string {
	tb.Helper()
	name := filepath.Join(c.memberDir(id, memberID), "env.txt")
	var data []byte
	poll.UntilWithin(tb, waitFor, memberID+" has written its environment", func() bool {
		var err error
		data, err = os.ReadFile(name) // renamed into place whole
		return err == nil
	})
	env := map[string]string{}
	for line := range strings.Lines(string(data)) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		env[k] = v
	}
	return env
}
