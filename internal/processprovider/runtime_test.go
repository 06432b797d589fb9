package processprovider

import (
	"testing"

	"github.com/stewardhq/steward/pkg/provider"
)

func TestRuntimeState(t *testing.T) {
	t.Parallel()
	server := func(id string, failed bool) memberView { return memberView{id: id, role: "server", failed: failed} }
	agent := func(id string, failed bool) memberView { return memberView{id: id, role: "agent", failed: failed} }
	cases := []struct {
		name           string
		reason         string
		members        []memberView
		wantHealth     string
		wantQuorumSafe bool
	}{
		{name: "AllHealthy", reason: "every member healthy", members: []memberView{server("s", false), agent("a", false)},
			wantHealth: provider.RuntimeHealthy, wantQuorumSafe: true},
		{name: "AgentFailed", reason: "a failed agent reduces capacity", members: []memberView{server("s", false), agent("a", true)},
			wantHealth: provider.RuntimeDegraded, wantQuorumSafe: true},
		{name: "OneOfThreeServersFailed", reason: "two of three servers keep quorum", members: []memberView{server("s0", false), server("s1", true), server("s2", false)},
			wantHealth: provider.RuntimeDegraded, wantQuorumSafe: true},
		{name: "TwoOfThreeServersFailed", reason: "one of three servers is no majority", members: []memberView{server("s0", false), server("s1", true), server("s2", true)},
			wantHealth: provider.RuntimeDegraded, wantQuorumSafe: false},
		{name: "OneOfTwoServersFailed", reason: "half is no majority", members: []memberView{server("s0", false), server("s1", true)},
			wantHealth: provider.RuntimeDegraded, wantQuorumSafe: false},
		{name: "NoServerHealthy", reason: "without a healthy server the runtime is unusable", members: []memberView{server("s", true), agent("a", false)},
			wantHealth: provider.RuntimeFailed, wantQuorumSafe: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := runtimeState(tc.members)
			if st.Health != tc.wantHealth || *st.QuorumSafe != tc.wantQuorumSafe || !*st.RepairAvailable {
				t.Errorf("%s\nhealth %s, quorum_safe %v, repair_available %v; want %s, %v, true",
					tc.reason, st.Health, *st.QuorumSafe, *st.RepairAvailable, tc.wantHealth, tc.wantQuorumSafe)
			}
			for i, m := range st.Members {
				if m.ID != tc.members[i].id || m.Health != tc.members[i].health() {
					t.Errorf("%s\nmember %d = %+v, want %s %s", tc.reason, i, m, tc.members[i].id, tc.members[i].health())
				}
			}
		})
	}
}
