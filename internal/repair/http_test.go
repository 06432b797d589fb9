package repair_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// Requests whose fields do not fit the seed's scope model are 400, naming
// the field; an order without a runtime, an unknown one and another
// project's are 404.
func TestRepair_RefusesBadRequests(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.order(t, "rke2", "c1")
		for _, tc := range []struct {
			name  string
			body  map[string]any
			field string
		}{
			{"member without target", map[string]any{"action": "repair", "scope": "member"}, "target_member_id"},
			{"target outside member scope", map[string]any{"action": "reconcile", "scope": "control_plane",
				"target_member_id": "server-0"}, "target_member_id"},
			{"component outside control plane", map[string]any{"action": "reconcile", "scope": "whole_runtime",
				"component_key": "server"}, "component_key"},
			{"unknown component", map[string]any{"action": "reconcile", "scope": "control_plane",
				"component_key": "etcd"}, "component_key"},
			{"unknown scope", map[string]any{"action": "repair", "scope": "node"}, "scope"},
			{"restart is its own route", map[string]any{"action": "restart", "scope": "whole_runtime"}, "action"},
		} {
			p := e.repair(t, "c1", tc.body).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
			if len(p.Fields) == 0 || p.Fields[0]["field"] != tc.field {
				t.Errorf("%s: fields %v, want %s", tc.name, p.Fields, tc.field)
			}
		}
		reconcile := map[string]any{"action": "reconcile", "scope": "whole_runtime"}
		e.repair(t, "nope", reconcile).WantProblem(t, http.StatusNotFound, "APP_INSTANCE_NOT_FOUND")
		e.as(t, root, "POST", "/api/v1/catalog-items?id=vm-item", map[string]any{"service_type": "vm",
			"defaults": map[string]any{"vcpu": map[string]any{"count": 2}, "memory": map[string]any{"size": "2GB"},
				"guest_os": map[string]any{"type": "fedora-39"}}}).Want(t, http.StatusCreated)
		e.as(t, root, "POST", "/api/v1/catalog-item-instances?id=plain-vm", map[string]any{"catalog_item_id": "vm-item"}).
			Want(t, http.StatusCreated)
		e.repair(t, "plain-vm", reconcile).WantProblem(t, http.StatusNotFound, "APP_INSTANCE_NOT_FOUND")

		e.as(t, "", "POST", appPath("c1")+"/repair", reconcile).WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")
		e.as(t, "", "GET", appPath("c1")+"/repair-operations", nil).WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")

		// A user of another project finds nothing, in the path or not.
		other := e.token(t, map[string]any{"name": "eve", "role": "user", "project": "team-b"})
		e.as(t, other, "POST", appPath("c1")+"/repair", reconcile).WantProblem(t, http.StatusNotFound, "APP_INSTANCE_NOT_FOUND")
		e.as(t, other, "GET", appPath("c1"), nil).WantProblem(t, http.StatusNotFound, "APP_INSTANCE_NOT_FOUND")
		e.as(t, other, "POST", "/api/v1/projects/team-b/app-instances/c1/repair", reconcile).
			WantProblem(t, http.StatusNotFound, "APP_INSTANCE_NOT_FOUND")
		if ops := e.p.Repairs(); len(ops) != 0 {
			t.Errorf("refused requests reached the provider: %v", ops)
		}
	})
}

// The seed's single-node and multi-node rules, decided from the reported
// topology: reconcile always; a destructive repair only when proven safe,
// else 409 with a deterministic reason and the next safe action.
func TestRepair_SafetyRulesFollowTheTopology(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.order(t, "rke2", "c1")
		refused := func(body map[string]any, reason, next string) {
			t.Helper()
			p := e.repair(t, "c1", body).WantProblem(t, http.StatusConflict, reason)
			if p.Extra["next_safe_action"] != next {
				t.Errorf("%v: next_safe_action %v, want %s", body, p.Extra["next_safe_action"], next)
			}
		}
		allowed := func(body map[string]any) {
			t.Helper()
			e.finish(t, "c1", started(t, e.repair(t, "c1", body)))
		}
		cp := map[string]any{"action": "repair", "scope": "control_plane"}
		whole := map[string]any{"action": "repair", "scope": "whole_runtime"}
		member := func(id string) map[string]any {
			return map[string]any{"action": "repair", "scope": "member", "target_member_id": id}
		}

		// Nothing reported: only reconcile, which discovers the runtime.
		refused(cp, "RUNTIME_STATE_UNKNOWN", "reconcile")
		allowed(map[string]any{"action": "reconcile", "scope": "whole_runtime"})

		// Multi-node, quorum not proven: agents and reconcile only.
		e.runtime(t, "c1", provider.RuntimeState{Health: provider.RuntimeDegraded,
			Members: members("server-0", "server", "server-1", "server", "server-2", "server", "agent-0", "agent")})
		refused(cp, "QUORUM_NOT_PROVEN_SAFE", "reconcile")
		refused(map[string]any{"action": "repair", "scope": "control_plane", "component_key": "server"},
			"QUORUM_NOT_PROVEN_SAFE", "reconcile")
		refused(whole, "QUORUM_NOT_PROVEN_SAFE", "repair_member")
		refused(member("server-1"), "QUORUM_NOT_PROVEN_SAFE", "reconcile")
		e.repair(t, "c1", member("server-9")).WantProblem(t, http.StatusNotFound, "MEMBER_NOT_FOUND")
		allowed(member("agent-0"))
		allowed(map[string]any{"action": "reconcile", "scope": "control_plane"})
		allowed(map[string]any{"action": "reconcile", "scope": "member", "target_member_id": "server-1"})

		// The worker proves quorum safe: server repairs are allowed.
		e.runtime(t, "c1", provider.RuntimeState{Health: provider.RuntimeDegraded, QuorumSafe: ptr(true),
			Members: members("server-0", "server", "server-1", "server", "server-2", "server", "agent-0", "agent")})
		allowed(cp)
		allowed(member("server-1"))

		// Single server, no HA control plane: control-plane and
		// whole-runtime repair restart it.
		e.runtime(t, "c1", provider.RuntimeState{Health: provider.RuntimeDegraded,
			Members: members("server-0", "server", "agent-0", "agent")})
		allowed(cp)
		allowed(whole)

		// Failed with no repair left: replace it.
		e.runtime(t, "c1", provider.RuntimeState{Health: provider.RuntimeFailed, RepairAvailable: ptr(false),
			Members: members("server-0", "server")})
		refused(cp, "REPAIR_NOT_AVAILABLE", "replace_app_instance")
		allowed(map[string]any{"action": "reconcile", "scope": "whole_runtime"})
	})
}

// A repair is a durable operation: 202 with the eight steps pending, handed
// to the provider with a worker token that can report on it alone; one runs
// per app instance; the same Idempotency-Key returns the same operation;
// reports move it forward step by step and never back; a failed repair
// degrades the runtime without failing the order; every step is audited.
func TestRepair_OperationRunsThroughItsSteps(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.order(t, "rke2", "c1")
		e.order(t, "rke2", "c2")
		e.runtime(t, "c1", provider.RuntimeState{Health: provider.RuntimeDegraded,
			Members: members("server-0", "server", "agent-0", "agent")})
		body := map[string]any{"action": "repair", "scope": "member", "target_member_id": "agent-0"}
		op := started(t, e.repair(t, "c1", body, "Idempotency-Key", "k-1"))
		if op.Status != "pending" || op.Phase != "precheck" || op.IdempotencyKey != "k-1" ||
			op.RequestedBy != "service_account:admin/token:static-api-token" || op.TargetMemberID == nil || *op.TargetMemberID != "agent-0" {
			t.Errorf("new operation = %+v", op)
		}
		var names []string
		for _, st := range op.Steps {
			names = append(names, st.Name)
			if st.Status != "pending" {
				t.Errorf("step %s is %s, want pending", st.Name, st.Status)
			}
		}
		if !slices.Equal(names, provider.RepairStepNames) {
			t.Errorf("steps %v, want the seed's %v", names, provider.RepairStepNames)
		}

		// Same key: same operation. Another key while it runs: 409 naming it.
		if again := started(t, e.repair(t, "c1", body, "Idempotency-Key", "k-1")); again.ID != op.ID {
			t.Errorf("replay answered operation %s, want %s", again.ID, op.ID)
		}
		p := e.repair(t, "c1", body, "Idempotency-Key", "k-2").WantProblem(t, http.StatusConflict, "REPAIR_IN_PROGRESS")
		if p.Extra["repair_operation_id"] != op.ID {
			t.Errorf("409 names %v, want %s", p.Extra["repair_operation_id"], op.ID)
		}
		var app appInstance
		e.as(t, root, "GET", appPath("c1"), nil).Want(t, http.StatusOK).JSON(t, &app)
		if app.ActiveRepairOperationID == nil || *app.ActiveRepairOperationID != op.ID {
			t.Errorf("app instance's active operation = %v, want %s", app.ActiveRepairOperationID, op.ID)
		}

		// Delivered to the provider, with what the worker needs.
		req := e.delivered(t, op)
		if calls := e.p.Repairs(); calls[0].InstanceID != app.InstanceID {
			t.Errorf("delivered to instance %q, want %q", calls[0].InstanceID, app.InstanceID)
		}
		if req.Action != "repair" || req.Scope != "member" ||
			req.TargetMemberID != "agent-0" || req.Token == "" || req.ObservedState == nil ||
			len(req.ObservedState.Members) != 2 || req.ReportPath != "/api/v1/"+op.Path+"/report" {
			t.Errorf("repair request = %+v", req)
		}
		if calls := e.p.Repairs(); calls[0].IdempotencyKey != op.ID {
			t.Errorf("delivery Idempotency-Key = %q, want the operation id", calls[0].IdempotencyKey)
		}
		poll.Until(t, "delivery recorded", func() bool {
			var got operation
			e.as(t, root, "GET", appPath("c1")+"/repair-operations/"+op.ID, nil).Want(t, http.StatusOK).JSON(t, &got)
			return got.DeliverTime != nil
		})

		// The worker token reports on its operation only, and users not at all.
		report := func(token, opID string, body map[string]any) *apitest.Response {
			return e.as(t, token, "POST", appPath("c1")+"/repair-operations/"+opID+"/report", body)
		}
		user := e.token(t, map[string]any{"name": "ann", "role": "user", "project": "default"})
		report(user, op.ID, map[string]any{"status": "running"}).WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		e.as(t, req.Token, "POST", appPath("c2")+"/repair", map[string]any{"action": "reconcile", "scope": "whole_runtime"}).
			WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		other := started(t, e.repair(t, "c2", map[string]any{"action": "reconcile", "scope": "whole_runtime"}))
		e.as(t, req.Token, "POST", appPath("c2")+"/repair-operations/"+other.ID+"/report",
			map[string]any{"status": "running"}).WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")

		var got operation
		report(req.Token, op.ID, map[string]any{"status": "running", "steps": []map[string]any{
			{"name": "precheck", "status": "succeeded"},
			{"name": "runtime_state_discovery", "status": "running", "message": "reading members"},
		}}).Want(t, http.StatusOK).JSON(t, &got)
		if got.Status != "running" || got.Phase != "runtime_state_discovery" || got.Steps[0].FinishedAt == nil ||
			got.Steps[1].StartedAt == nil || got.Steps[1].Message != "reading members" {
			t.Errorf("after the first report: %+v", got)
		}
		report(req.Token, op.ID, map[string]any{"status": "running", "steps": []map[string]any{
			{"name": "precheck", "status": "running"}}}).WantProblem(t, http.StatusConflict, "REPAIR_REPORT_REGRESSION")
		report(req.Token, op.ID, map[string]any{"status": "failed"}).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")

		// Partial success stays visible; the runtime degrades, the order does not fail.
		var before struct{ State string }
		e.as(t, root, "GET", "/api/v1/catalog-item-instances/c1", nil).Want(t, http.StatusOK).JSON(t, &before)
		report(req.Token, op.ID, map[string]any{"status": "failed",
			"steps": []map[string]any{
				{"name": "runtime_state_discovery", "status": "succeeded"},
				{"name": "member_health_check", "status": "succeeded"},
				{"name": "service_reconcile", "status": "failed", "message": "rke2-agent did not start"},
				{"name": "restart_rke2_agent", "status": "failed"},
			},
			"error":            map[string]any{"code": "AGENT_RESTART_FAILED", "message": "rke2-agent exited 1"},
			"next_safe_action": "replace_member",
			"runtime_state": map[string]any{"health": "degraded", "repair_available": true,
				"members": []map[string]any{{"id": "server-0", "role": "server", "health": "healthy"},
					{"id": "agent-0", "role": "agent", "health": "failed"}}},
		}).Want(t, http.StatusOK).JSON(t, &got)
		if got.Status != "failed" || got.Error == nil || got.Error.Code != "AGENT_RESTART_FAILED" ||
			got.NextSafeAction != "replace_member" || got.Phase != "service_reconcile" ||
			got.Steps[len(got.Steps)-1].Name != "restart_rke2_agent" || got.Steps[3].Status != "failed" ||
			got.Steps[4].Status != "pending" {
			t.Errorf("after the failure report: %+v", got)
		}
		e.as(t, root, "GET", appPath("c1"), nil).Want(t, http.StatusOK).JSON(t, &app)
		if app.RuntimeState == nil || app.RuntimeState.Health != "degraded" || app.ActiveRepairOperationID != nil ||
			app.RuntimeState.RepairAvailable == nil || !*app.RuntimeState.RepairAvailable {
			t.Errorf("app instance after a failed repair: %+v", app)
		}
		var after struct{ State string }
		e.as(t, root, "GET", "/api/v1/catalog-item-instances/c1", nil).Want(t, http.StatusOK).JSON(t, &after)
		if after.State != before.State {
			t.Errorf("a failed repair moved the order from %s to %s", before.State, after.State)
		}
		// A finished operation takes no other outcome; a retried report is
		// harmless. (The worker's token ended with the operation.)
		report(req.Token, op.ID, map[string]any{"status": "succeeded"}).WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")
		report(root, op.ID, map[string]any{"status": "succeeded"}).WantProblem(t, http.StatusConflict, "REPAIR_OPERATION_DONE")
		report(root, op.ID, map[string]any{"status": "failed", "error": map[string]any{"code": "AGENT_RESTART_FAILED"}}).
			Want(t, http.StatusOK)

		// A new key makes a new operation, which sees the last one's observed state.
		next := started(t, e.repair(t, "c1", body, "Idempotency-Key", "k-3"))
		if next.ID == op.ID {
			t.Fatal("a new key returned the finished operation")
		}
		if r := e.delivered(t, next); r.ObservedState == nil || r.ObservedState.Members[1].Health != "failed" {
			t.Errorf("the new operation's observed state = %+v, want the failed report's", r.ObservedState)
		}
		var list struct {
			Results []operation
		}
		e.as(t, root, "GET", appPath("c1")+"/repair-operations", nil).Want(t, http.StatusOK).JSON(t, &list)
		if len(list.Results) != 2 || list.Results[0].ID != op.ID || list.Results[1].ID != next.ID {
			t.Errorf("operations list = %+v", list.Results)
		}

		// The audit log has the seed's actions and targets.
		var audit struct {
			Results []struct{ Action, Target, Outcome string }
		}
		e.as(t, root, "GET", "/api/v1/audit-events?action=app_instance.repair.requested", nil).
			Want(t, http.StatusOK).JSON(t, &audit)
		if !slices.ContainsFunc(audit.Results, func(r struct{ Action, Target, Outcome string }) bool {
			return r.Target == "app_instance:c1" && r.Outcome == "success"
		}) {
			t.Errorf("no successful app_instance.repair.requested on app_instance:c1: %+v", audit.Results)
		}
		e.as(t, root, "GET", "/api/v1/audit-events?action=app_instance.repair.reported&target=app_instance_repair_operation:"+op.ID, nil).
			Want(t, http.StatusOK).JSON(t, &audit)
		outcomes := map[string]int{}
		for _, r := range audit.Results {
			outcomes[r.Outcome]++
		}
		if outcomes["success"] < 2 || outcomes["denied"] < 1 || outcomes["error"] < 1 {
			t.Errorf("app_instance.repair.reported outcomes = %v, want successes, a denial and errors", outcomes)
		}
	})
}
