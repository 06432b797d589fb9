package policy_test

import (
	"net/http"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 13 (`steward policy test -f`): draft policies in evaluateRequest
// run as if stored: one with a stored policy's id stands in for it, a
// disabled one takes it out, a new one joins the chain. Nothing is stored.
func TestEvaluateRequest_DraftPolicies(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.create(t, "no-gpu", map[string]any{"display_name": "No GPUs", "policy_type": "GLOBAL",
			"rego_code": "package steward.nogpu\n\nmain := {\"rejected\": true, \"rejection_reason\": \"no\"} if input.spec.gpu\n"})
		gpu := vmSpec()
		gpu["gpu"] = true
		body := func(drafts ...map[string]any) map[string]any {
			return map[string]any{"service_instance": map[string]any{"spec": gpu}, "policies": drafts}
		}
		e.do(t, "POST", "/api/v1/policies:evaluateRequest", body()).problem(t, http.StatusNotAcceptable, "POLICY_REJECTED")

		// The draft of no-gpu allows GPUs: it stands in for the stored one.
		var got evaluation
		e.do(t, "POST", "/api/v1/policies:evaluateRequest", body(map[string]any{"id": "no-gpu", "policy_type": "GLOBAL",
			"rego_code": "package steward.nogpu\n\nmain := {\"patch\": {\"gpu_checked\": true}}\n"})).want(t, http.StatusOK).json(t, &got)
		if got.EvaluatedServiceInstance.Spec["gpu_checked"] != true || len(got.AppliedPolicies) != 1 || got.AppliedPolicies[0] != "no-gpu" {
			t.Fatalf("with the draft of no-gpu: %+v", got)
		}
		// Disabled, it takes the stored policy out of the chain.
		got = evaluation{}
		e.do(t, "POST", "/api/v1/policies:evaluateRequest", body(map[string]any{"id": "no-gpu", "policy_type": "GLOBAL", "enabled": false,
			"rego_code": "package steward.nogpu\n\nmain := {}\n"})).want(t, http.StatusOK).json(t, &got)
		if got.Status != "APPROVED" || len(got.AppliedPolicies) != 0 {
			t.Fatalf("with no-gpu disabled by a draft: %+v", got)
		}
		// A new draft joins the chain beside the stored one, which still rejects.
		p := e.do(t, "POST", "/api/v1/policies:evaluateRequest", body(map[string]any{"policy_type": "USER",
			"rego_code": "package steward.other\n\nmain := {}\n"})).problem(t, http.StatusNotAcceptable, "POLICY_REJECTED")
		if p["policy_id"] != "no-gpu" {
			t.Errorf("the stored policy should still reject beside a new draft: %v", p)
		}
		// A draft is checked as a create is.
		p = e.do(t, "POST", "/api/v1/policies:evaluateRequest", body(map[string]any{"policy_type": "GLOBAL", "priority": 5000,
			"rego_code": "package x\n\nmain := {}\n"})).problem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if fields, _ := p["fields"].([]any); len(fields) != 1 || fields[0].(map[string]any)["field"] != "policies[0].priority" {
			t.Errorf("an out-of-range priority: %v", p)
		}
		e.do(t, "POST", "/api/v1/policies:evaluateRequest", body(map[string]any{"policy_type": "GLOBAL",
			"rego_code": "package x\n\nmain := {\"colour\": 1}\n"})).problem(t, http.StatusBadRequest, "INVALID_POLICY")
		// Nothing was stored.
		var list struct {
			Results []map[string]any `json:"results"`
		}
		e.do(t, "GET", "/api/v1/policies", nil).want(t, http.StatusOK).json(t, &list)
		if len(list.Results) != 1 || list.Results[0]["rego_code"] != "package steward.nogpu\n\nmain := {\"rejected\": true, \"rejection_reason\": \"no\"} if input.spec.gpu\n" {
			t.Errorf("policies after evaluating drafts: %v", list.Results)
		}
	})
}
