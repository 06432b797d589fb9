package processprovider

import (
	"context"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/pkg/provider"
)

// RuntimeReporter sends what the provider observes of app instances'
// runtimes, and repair operations' progress, to Steward;
// [provider.HTTPReporter] satisfies it. Both methods must honour ctx; an
// error makes the provider retry (see [Config.ReportAttempts]).
type RuntimeReporter interface {
	ReportRuntime(ctx context.Context, project, appInstanceID string, r provider.RuntimeReport) error
	ReportRepair(ctx context.Context, req provider.RepairRequest, r provider.RepairReport) error
}

// runtimeState is the runtime state of members: healthy when every member
// is, degraded while some member failed but a server is healthy, failed
// when no server is. A process can always be started again, so a repair is
// available while there is a member; quorum is safe while more than half
// the servers are healthy.
func runtimeState(members []memberView) provider.RuntimeState {
	var servers, healthyServers, failed int
	ms := make([]provider.Member, len(members))
	for i, v := range members {
		ms[i] = provider.Member{ID: v.id, Role: v.role, Health: v.health(), Message: v.message}
		if v.failed {
			failed++
		}
		if v.role == provider.MemberRoleServer {
			servers++
			if !v.failed {
				healthyServers++
			}
		}
	}
	health := provider.RuntimeHealthy
	switch {
	case healthyServers == 0:
		health = provider.RuntimeFailed
	case failed > 0:
		health = provider.RuntimeDegraded
	}
	repairable, quorumSafe := len(members) > 0, healthyServers*2 > servers
	return provider.RuntimeState{Health: health, RepairAvailable: &repairable, QuorumSafe: &quorumSafe, Members: ms}
}

// runtimeKey is what a runtime report is sent for a change of: the
// healths, not the messages, which change with every restart.
func runtimeKey(st provider.RuntimeState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %v %v", st.Health, *st.RepairAvailable, *st.QuorumSafe)
	for _, m := range st.Members {
		fmt.Fprintf(&b, " %s=%s", m.ID, m.Health)
	}
	return b.String()
}

// runtimeSummary says in a line how the members are, for Get's message.
func runtimeSummary(st provider.RuntimeState) string {
	var failed []string
	for _, m := range st.Members {
		if m.Health == provider.RuntimeFailed {
			failed = append(failed, m.ID)
		}
	}
	if len(failed) == 0 {
		return fmt.Sprintf("all %d members running", len(st.Members))
	}
	return fmt.Sprintf("runtime %s: %d of %d members failed (%s)", st.Health, len(failed), len(st.Members),
		strings.Join(failed, ", "))
}

// currentRuntimeLocked is the runtime state of the instance's members; the
// caller holds in.mu.
func (in *instance) currentRuntimeLocked() provider.RuntimeState {
	vs := make([]memberView, len(in.members))
	for i, m := range in.members {
		vs[i] = m.view()
	}
	return runtimeState(vs)
}

// runtimeChangedLocked looks at the runtime of a RUNNING instance with
// members after one of them changed: it keeps Get's message in step and
// queues a runtime report when the state changed, or when force is set.
// Before RUNNING there is no runtime to speak of (the members are still
// starting, or the instance FAILED); while DELETING nobody needs one. The
// caller holds in.mu.
func (p *Provider) runtimeChangedLocked(in *instance, force bool) {
	if !in.hasMembersLocked() || in.status != provider.StatusRunning {
		return
	}
	st := in.currentRuntimeLocked()
	in.message = runtimeSummary(st)
	key := runtimeKey(st)
	if key == in.lastRuntime && !force {
		return
	}
	in.lastRuntime = key
	p.queueRuntimeLocked(in, st)
}

// queueRuntimeLocked queues a runtime report of st, observed now, when
// there is a reporter and the instance knows its order; the caller holds
// in.mu, so reports are queued in the order the states were seen.
func (p *Provider) queueRuntimeLocked(in *instance, st provider.RuntimeState) {
	if !p.reportsRuntime(in) {
		return
	}
	r := provider.RuntimeReport{RuntimeState: st, ObservedTime: p.cfg.Now()}
	project, appID := in.project, in.appInstanceID
	p.put(in.runtimeOut, "runtime report", p.logger.With("instance_id", in.id), func(ctx context.Context) error {
		return p.cfg.Runtime.ReportRuntime(ctx, project, appID, r)
	})
}

// reportsRuntime says whether runtime reports of in can be sent: Steward
// files them under the order, so without its project and id they cannot.
func (p *Provider) reportsRuntime(in *instance) bool {
	return p.cfg.Runtime != nil && in.project != "" && in.appInstanceID != ""
}
