package repair

import (
	"fmt"
	"slices"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/pkg/provider"
)

// Request asks for an operation on an app instance.
type Request struct {
	Project        string
	AppInstanceID  string
	Action         string
	Scope          string
	TargetMemberID string
	ComponentKey   string
	// IdempotencyKey is the client's header, shown on the operation;
	// RequestKey identifies it per principal (httpapi.RequestKey): run
	// again under the same key, Request returns the operation it started.
	IdempotencyKey string
	RequestKey     string
}

// componentServer is the one component_key the seed names.
const componentServer = "server"

// checkShape refuses a request whose fields do not fit together (400).
func checkShape(r Request) error {
	var errs invalid.Errors
	switch r.Action {
	case provider.RepairActionRepair, provider.RepairActionReconcile, provider.RepairActionRestart:
	default:
		errs.Add("action", "must be repair or reconcile")
	}
	switch r.Scope {
	case provider.ScopeMember:
		if r.TargetMemberID == "" {
			errs.Add("target_member_id", "is required with scope member")
		} else if !memberIDPattern.MatchString(r.TargetMemberID) {
			errs.Add("target_member_id", "must match %s", memberIDPattern)
		}
	case provider.ScopeWholeRuntime, provider.ScopeControlPlane:
		if r.TargetMemberID != "" {
			errs.Add("target_member_id", "names a member only with scope member, not %s", r.Scope)
		}
	default:
		errs.Add("scope", "must be one of whole_runtime, control_plane, member")
	}
	if r.ComponentKey != "" {
		switch {
		case r.Scope != provider.ScopeControlPlane:
			errs.Add("component_key", "is only taken with scope control_plane")
		case r.ComponentKey != componentServer:
			errs.Add("component_key", "must be %q", componentServer)
		}
	}
	return errs.Err()
}

// checkSafe applies the seed's single-node and multi-node rules to the
// reported topology. Reconcile is never destructive and always allowed
// (for a member, once the member is known). A destructive repair must be
// proven safe: by a single server, or by the worker's quorum_safe; a
// simple runtime has no quorum to lose. rt is nil when nothing was
// reported yet.
func checkSafe(r Request, kind string, rt *Runtime) error {
	var target *provider.Member
	if r.Scope == provider.ScopeMember && rt != nil {
		i := slices.IndexFunc(rt.Members, func(m provider.Member) bool { return m.ID == r.TargetMemberID })
		if i < 0 {
			return fmt.Errorf("%w: %q is not a member of app instance %s", ErrMemberNotFound, r.TargetMemberID, r.AppInstanceID)
		}
		target = &rt.Members[i]
	}
	if r.Action == provider.RepairActionReconcile {
		return nil
	}
	if rt == nil {
		if kind == KindSimple {
			return nil
		}
		return &RefusedError{Reason: ErrRuntimeStateUnknown, NextSafeAction: NextReconcile,
			Detail: "no runtime report has shown the members yet, so no destructive repair is proven safe; reconcile discovers them"}
	}
	if rt.Health == provider.RuntimeFailed && rt.RepairAvailable != nil && !*rt.RepairAvailable {
		return &RefusedError{Reason: ErrRepairNotAvailable, NextSafeAction: NextReplaceInstance,
			Detail: "the runtime is failed and its worker reports that no repair remains; replace or decommission it"}
	}
	if kind == KindSimple {
		return nil
	}
	servers := 0
	for _, m := range rt.Members {
		if m.Role == provider.MemberRoleServer {
			servers++
		}
	}
	quorumSafe := rt.QuorumSafe != nil && *rt.QuorumSafe
	if servers <= 1 || quorumSafe {
		return nil // single server (no HA control plane), or proven safe
	}
	switch {
	case r.Scope == provider.ScopeMember && target.Role == provider.MemberRoleAgent:
		return nil // agent repair is allowed on multi-node runtimes
	case r.Scope == provider.ScopeMember:
		return &RefusedError{Reason: ErrQuorumNotProvenSafe, NextSafeAction: NextReconcile,
			Detail: fmt.Sprintf("member %s is one of %d servers and the worker has not reported quorum_safe; "+
				"restarting it could lose quorum", target.ID, servers)}
	case r.Scope == provider.ScopeControlPlane:
		return &RefusedError{Reason: ErrQuorumNotProvenSafe, NextSafeAction: NextReconcile,
			Detail: fmt.Sprintf("the control plane has %d servers and the worker has not reported quorum_safe; "+
				"a control-plane repair that restarts a server is blocked", servers)}
	default:
		return &RefusedError{Reason: ErrQuorumNotProvenSafe, NextSafeAction: NextRepairMember,
			Detail: fmt.Sprintf("a whole-runtime repair of %d servers is not proven safe (no quorum_safe); "+
				"reconcile the runtime or repair one member at a time", servers)}
	}
}
