package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/pkg/client"
)

// App instances and their repair operations live under
// /projects/{project_id}/app-instances/{id}: the project in the path is the
// app instance's order's, read first with the request's own project (the
// --project header for an admin, a project-bound token's own), so that the
// commands take an order id as every other command does.

var appInstances = &kind{
	name: "app-instances", aliases: []string{"app-instance", "apps", "app", "ai"},
	get: func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
		project, rsp, err := orderProject(ctx, api, id)
		if rsp != nil || err != nil {
			return rsp, err
		}
		return api.GetAppInstance(ctx, project, id)
	},
	columns: []column{idCol, {"SERVICE TYPE", field("service_type")}, {"STATE", field("state")},
		{"RUNTIME", field("runtime_state.health")}, {"ACTIVE REPAIR", field("active_repair_operation_id")},
		{"PROVIDER", field("provider_name")}},
	wide: []column{{"PROJECT", field("project")}, {"ACTIONS", field("suggested_actions")},
		{"OBSERVED", age("runtime_state.observed_time")}},
	nameOf: func(o object) string { return "app-instances/" + o.str("id") },
}

// repairOperations are named APP_INSTANCE/OPERATION_ID; listed per app
// instance (--app-instance).
var repairOperations = &kind{
	name: "repair-operations", aliases: []string{"repair-operation", "repairs", "repair"},
	get: func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
		app, op, _ := strings.Cut(id, "/")
		project, rsp, err := orderProject(ctx, api, app)
		if rsp != nil || err != nil {
			return rsp, err
		}
		return api.GetRepairOperation(ctx, project, app, op)
	},
	columns: []column{idCol, {"APP INSTANCE", field("app_instance_id")}, {"ACTION", field("action")},
		{"SCOPE", field("scope")}, {"STATUS", field("status")}, {"PHASE", field("phase")},
		{"ERROR", field("error.code")}, ageCol},
	wide: []column{{"MEMBER", field("target_member_id")}, {"NEXT ACTION", field("next_safe_action")},
		{"REQUESTED BY", field("requested_by")}, {"PROJECT", field("project")}},
	nameOf: func(o object) string {
		return "repair-operations/" + o.str("app_instance_id") + "/" + o.str("id")
	},
	idParts: 2,
}

// listRepairOperations is the list of one app instance's operations.
func listRepairOperations(app string) listCall {
	return func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
		project, rsp, err := orderProject(ctx, api, app)
		if rsp != nil || err != nil {
			return rsp, err
		}
		return api.ListRepairOperations(ctx, project, app, nil, eds...)
	}
}

// orderProject is the project of order id as the request's project sees
// it. A problem answer comes back as rsp, for the caller to report.
func orderProject(ctx context.Context, api client.ClientInterface, id string) (string, *http.Response, error) {
	rsp, err := api.GetCatalogItemInstance(ctx, id, nil)
	if err != nil {
		return "", nil, err
	}
	if rsp.StatusCode/100 != 2 {
		return "", rsp, nil
	}
	defer rsp.Body.Close()
	var o struct {
		Project string `json:"project"`
	}
	if err := json.NewDecoder(io.LimitReader(rsp.Body, maxAnswer)).Decode(&o); err != nil {
		return "", nil, fmt.Errorf("the server's order %s: %w", id, err)
	}
	return o.Project, nil, nil
}

// repairCmd is `steward repair|reconcile|restart APP_INSTANCE`: start a
// repair operation and print it, or follow its steps with --wait.
func (e *env) repairCmd(action string) *cobra.Command {
	var (
		cf                      connFlags
		wf                      waitFlags
		scope, member, compo, o string
		wait                    bool
	)
	short := map[string]string{
		"repair":    "Repair an app instance's runtime (may restart runtime services within --scope)",
		"reconcile": "Reconcile an app instance's runtime (corrects drift, no destructive restarts)",
		"restart":   "Restart the whole runtime of an app instance (simple runtimes)",
	}[action]
	cmd := &cobra.Command{
		Use:   action + " APP_INSTANCE",
		Short: short,
		Long: short + ".\n\n" +
			"APP_INSTANCE is the id of an order whose service type has a runtime. The command starts\n" +
			"a repair operation and prints it; --wait follows its steps (a line as each advances)\n" +
			"and exits 1 when it fails. The operations of an app instance:\n" +
			"  steward get repair-operations --app-instance APP_INSTANCE\n" +
			"  steward describe repair-operations/APP_INSTANCE/OPERATION_ID",
		Example: map[string]string{
			"repair":    "  steward repair sc1 --member agent-1 --wait\n  steward repair sc1 --scope control_plane --component server",
			"reconcile": "  steward reconcile sc1 --wait",
			"restart":   "  steward restart sc1 --wait",
		}[action],
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: e.completeIDs(&cf, orders),
		RunE: func(cmd *cobra.Command, args []string) error {
			app, err := appInstanceID(args[0])
			if err != nil {
				return err
			}
			var body client.RepairRequest
			if action != "restart" {
				if body, err = repairRequest(action, scope, member, compo, cmd.Flags().Changed("scope")); err != nil {
					return err
				}
			}
			c, err := cf.connectFor(cmd, o, app)
			if err != nil {
				return err
			}
			return e.startAndFollow(cmd.Context(), c, func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
				project, rsp, err := orderProject(ctx, api, app)
				if rsp != nil || err != nil {
					return rsp, err
				}
				if action == "restart" {
					return api.RestartAppInstance(ctx, project, app, nil)
				}
				return api.RepairAppInstance(ctx, project, app, nil, body)
			}, repairOperations, o, wait, waitFor{what: "done"}, wf)
		},
	}
	cf.register(cmd)
	wf.register(cmd)
	f := cmd.Flags()
	if action != "restart" {
		f.StringVar(&scope, "scope", "whole_runtime", "whole_runtime, control_plane or member (default member with --member)")
		f.StringVar(&member, "member", "", "the runtime member to act on (scope member)")
		f.StringVar(&compo, "component", "", "with --scope control_plane: the component, server")
	}
	f.BoolVar(&wait, "wait", false, "follow the operation's steps until it succeeds or fails (exit 1)")
	f.StringVarP(&o, "output", "o", "", "json, yaml, wide or name (default: a table)")
	return cmd
}

// repairRequest checks the flags of repair and reconcile and makes the body.
func repairRequest(action, scope, member, component string, scopeGiven bool) (client.RepairRequest, error) {
	if member != "" && !scopeGiven {
		scope = string(client.RepairRequestScopeMember)
	}
	body := client.RepairRequest{Action: client.RepairRequestAction(action), Scope: client.RepairRequestScope(scope),
		TargetMemberId: opt(member), ComponentKey: opt(component)}
	switch body.Scope {
	case client.RepairRequestScopeWholeRuntime, client.RepairRequestScopeControlPlane:
		if member != "" {
			return body, usagef("--member names a member of scope member, not %s", scope)
		}
	case client.RepairRequestScopeMember:
		if member == "" {
			return body, usagef("--scope member needs --member MEMBER")
		}
	default:
		return body, usagef("--scope %q: want whole_runtime, control_plane or member", scope)
	}
	if component != "" && body.Scope != client.RepairRequestScopeControlPlane {
		return body, usagef("--component goes with --scope control_plane")
	}
	return body, nil
}

// repairSummary is a repair operation's progress: its status and how far
// its steps are ("running, step 3/8 member_health_check running").
func repairSummary(o object) string {
	steps, _ := o.m["steps"].([]any)
	finished := 0
	for _, s := range steps {
		if m, ok := s.(map[string]any); ok {
			switch text(m["status"]) {
			case "succeeded", "failed", "skipped":
				finished++
			}
		}
	}
	s := fmt.Sprintf("status %s, %d/%d steps done", o.str("status"), finished, len(steps))
	if p := o.str("phase"); p != "" {
		s += ", phase " + p
		for _, st := range steps {
			if m, ok := st.(map[string]any); ok && text(m["name"]) == p {
				s += " " + text(m["status"])
				if msg := text(m["message"]); msg != "" {
					s += ": " + msg
				}
			}
		}
	}
	return s
}

// repairDone is a repair operation's end: failed is an error naming its
// code and the next safe action.
func repairDone(o object) (bool, error) {
	switch o.str("status") {
	case "succeeded":
		return true, nil
	case "failed":
		msg := fmt.Sprintf("repair operation %s of %s failed", o.str("id"), o.str("app_instance_id"))
		if c := o.str("error.code"); c != "" {
			msg += ": " + c
			if m := o.str("error.message"); m != "" {
				msg += ": " + m
			}
		}
		if n := o.str("next_safe_action"); n != "" {
			msg += " (next safe action: " + n + ")"
		}
		return true, fmt.Errorf("%s", msg)
	}
	return false, nil
}

// isRepairOperation tells a repair operation from other resources a waiter
// follows.
func isRepairOperation(o object) bool {
	_, ok := o.m["steps"]
	return ok && o.str("app_instance_id") != ""
}
