package processprovider

import (
	"fmt"
	"strings"

	"github.com/stewardhq/steward/pkg/provider"
)

// repairScope returns the ids of the members req applies to, in the
// instance's order, or the deterministic error that refuses it:
//
//	member         the target member; target_member_id is required
//	control_plane  the target member if given (it must be a server), else
//	               every server; component_key may only be "server"
//	whole_runtime  every member
func repairScope(req provider.RepairRequest, members []memberView) ([]string, *provider.RepairError) {
	switch req.Scope {
	case provider.ScopeMember:
		if req.TargetMemberID == "" {
			return nil, &provider.RepairError{Code: RepairCodeMemberNotFound, Message: "scope member requires target_member_id"}
		}
		if !hasMember(members, req.TargetMemberID, "") {
			return nil, &provider.RepairError{Code: RepairCodeMemberNotFound,
				Message: fmt.Sprintf("no member %q; the members are %s", req.TargetMemberID, memberIDs(members, ""))}
		}
		return []string{req.TargetMemberID}, nil
	case provider.ScopeControlPlane:
		if req.ComponentKey != "" && req.ComponentKey != provider.MemberRoleServer {
			return nil, &provider.RepairError{Code: RepairCodeComponentNotFound,
				Message: fmt.Sprintf("component_key %q: a process runtime's only component is server", req.ComponentKey)}
		}
		if req.TargetMemberID != "" {
			if !hasMember(members, req.TargetMemberID, provider.MemberRoleServer) {
				return nil, &provider.RepairError{Code: RepairCodeMemberNotFound,
					Message: fmt.Sprintf("no server %q; the servers are %s", req.TargetMemberID,
						memberIDs(members, provider.MemberRoleServer))}
			}
			return []string{req.TargetMemberID}, nil
		}
		return idsOf(members, provider.MemberRoleServer), nil
	case provider.ScopeWholeRuntime:
		return idsOf(members, ""), nil
	}
	return nil, &provider.RepairError{Code: RepairCodeUnsupportedScope,
		Message: fmt.Sprintf("scope %q: want whole_runtime, control_plane or member", req.Scope)}
}

// hasMember reports whether members has id, with role unless role is "".
func hasMember(members []memberView, id, role string) bool {
	for _, v := range members {
		if v.id == id && (role == "" || v.role == role) {
			return true
		}
	}
	return false
}

// idsOf returns the ids of the members with role, or of all when role is "".
func idsOf(members []memberView, role string) []string {
	var ids []string
	for _, v := range members {
		if role == "" || v.role == role {
			ids = append(ids, v.id)
		}
	}
	return ids
}

// memberIDs lists the ids of idsOf for a message.
func memberIDs(members []memberView, role string) string {
	return strings.Join(idsOf(members, role), ", ")
}
