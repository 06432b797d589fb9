package processprovider

import (
	"slices"
	"testing"

	"github.com/stewardhq/steward/pkg/provider"
)

func TestRepairScope(t *testing.T) {
	t.Parallel()
	members := []memberView{{id: "s0", role: "server"}, {id: "a0", role: "agent"}, {id: "s1", role: "server"}}
	cases := []struct {
		name     string
		req      provider.RepairRequest
		want     []string
		wantCode string
	}{
		{name: "Member", req: provider.RepairRequest{Scope: "member", TargetMemberID: "a0"}, want: []string{"a0"}},
		{name: "MemberWithoutTarget", req: provider.RepairRequest{Scope: "member"}, wantCode: RepairCodeMemberNotFound},
		{name: "UnknownMember", req: provider.RepairRequest{Scope: "member", TargetMemberID: "x"}, wantCode: RepairCodeMemberNotFound},
		{name: "ControlPlane", req: provider.RepairRequest{Scope: "control_plane"}, want: []string{"s0", "s1"}},
		{name: "ControlPlaneServerComponent", req: provider.RepairRequest{Scope: "control_plane", ComponentKey: "server"}, want: []string{"s0", "s1"}},
		{name: "ControlPlaneOtherComponent", req: provider.RepairRequest{Scope: "control_plane", ComponentKey: "etcd"}, wantCode: RepairCodeComponentNotFound},
		{name: "ControlPlaneTarget", req: provider.RepairRequest{Scope: "control_plane", TargetMemberID: "s1"}, want: []string{"s1"}},
		{name: "ControlPlaneAgentTarget", req: provider.RepairRequest{Scope: "control_plane", TargetMemberID: "a0"}, wantCode: RepairCodeMemberNotFound},
		{name: "WholeRuntime", req: provider.RepairRequest{Scope: "whole_runtime"}, want: []string{"s0", "a0", "s1"}},
		{name: "UnknownScope", req: provider.RepairRequest{Scope: "node"}, wantCode: RepairCodeUnsupportedScope},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := repairScope(tc.req, members)
			var code string
			if err != nil {
				code = err.Code
			}
			if code != tc.wantCode || !slices.Equal(got, tc.want) {
				t.Errorf("repairScope(%+v) = %v, %v; want %v, code %q", tc.req, got, err, tc.want, tc.wantCode)
			}
		})
	}
}
