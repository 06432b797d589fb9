package policy_test

import (
	"net/http"
	"testing"

	"github.com/stewardhq/steward/internal/policy"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

func registry() []policy.ProviderInfo {
	return []policy.ProviderInfo{
		{Name: "kv-east", ServiceTypes: []string{"vm"}, Metadata: map[string]string{"region": "east"}, Status: "healthy", LiveInstances: 3},
		{Name: "kv-west", ServiceTypes: []string{"vm"}, Metadata: map[string]string{"region": "west"}, Status: "healthy", LiveInstances: 5},
		{Name: "kv-down", ServiceTypes: []string{"vm"}, Status: "unavailable"},
	}
}

func TestEvaluateRequest_RejectionIs406NamingThePolicy(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.create(t, "no-gpu", map[string]any{"display_name": "No GPUs", "policy_type": "GLOBAL",
			"rego_code": "package steward.nogpu\n\nmain := {\"rejected\": true, \"rejection_reason\": \"GPUs are not offered\"} if input.spec.gpu\n"})
		e.evaluate(t, vmSpec()) // no gpu: the policy has nothing to say

		spec := vmSpec()
		spec["gpu"] = true
		for _, path := range []string{"/api/v1/policies:evaluateRequest", "/api/v1alpha1/policies:evaluateRequest"} {
			p := e.do(t, "POST", path, map[string]any{"service_instance": map[string]any{"spec": spec}}).
				problem(t, http.StatusNotAcceptable, "POLICY_REJECTED")
			if p["policy_id"] != "no-gpu" || p["policy_name"] != "No GPUs" || p["rejection_reason"] != "GPUs are not offered" {
				t.Errorf("%s: problem %v should name the policy and its reason", path, p)
			}
		}
	})
}

func TestEvaluateRequest_PatchAndSelection(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.providers.set(registry()...)
		e.create(t, "prod-west", map[string]any{"display_name": "Prod in the west", "policy_type": "TENANT",
			"label_selector": map[string]string{"env": "prod"},
			"rego_code":      "package steward.prod\n\nmain := {\"patch\": {\"ha\": true}, \"selected_provider\": \"kv-west\"}\n"})

		var got evaluation
		e.do(t, "POST", "/api/v1alpha1/policies:evaluateRequest", map[string]any{
			"service_instance": map[string]any{"spec": vmSpec(), "labels": map[string]string{"env": "prod"}},
		}).want(t, http.StatusOK).json(t, &got)
		if got.Status != "MODIFIED" || got.EvaluatedServiceInstance.Spec["ha"] != true || got.SelectedProvider != "kv-west" ||
			len(got.AppliedPolicies) != 1 {
			t.Fatalf("evaluated %+v; want the patch and the policy's provider", got)
		}
		// Without the label the policy does not run: the default rule picks
		// the healthy provider with the fewest live instances.
		if got := e.evaluate(t, vmSpec()); got.Status != "APPROVED" || got.SelectedProvider != "kv-east" {
			t.Fatalf("evaluated %+v; want APPROVED on kv-east", got)
		}
		got = evaluation{}
		e.do(t, "POST", "/api/v1/policies:evaluateRequest", map[string]any{
			"service_instance": map[string]any{"spec": vmSpec()}, "exclude_providers": []string{"kv-east"},
		}).want(t, http.StatusOK).json(t, &got)
		if got.SelectedProvider != "kv-west" {
			t.Fatalf("with kv-east excluded, selected %q", got.SelectedProvider)
		}
		e.do(t, "POST", "/api/v1/policies:evaluateRequest", map[string]any{
			"service_instance":  map[string]any{"spec": vmSpec(), "labels": map[string]string{"env": "prod"}},
			"exclude_providers": []string{"kv-west"},
		}).problem(t, http.StatusConflict, "POLICY_CONFLICT")

		e.providers.set(registry()[2])
		if got := e.evaluate(t, vmSpec()); got.SelectedProvider != "" {
			t.Fatalf("no healthy provider, yet selected %q; evaluateRequest is advisory and should answer \"\"", got.SelectedProvider)
		}
	})
}

func TestEvaluateRequest_DefaultPickHonoursProviderConstraints(t *testing.T) {
	t.Parallel()
	e := setup(t, store.SQLite)
	e.providers.set(registry()...)
	e.create(t, "west-only", map[string]any{"display_name": "West only", "policy_type": "GLOBAL",
		"rego_code": "package steward.west\n\nmain := {\"provider_constraints\": {\"metadata\": {\"region\": \"west\"}}}\n"})
	if got := e.evaluate(t, vmSpec()); got.SelectedProvider != "kv-west" {
		t.Fatalf("selected %q; the default rule must stay within the policies' provider constraints", got.SelectedProvider)
	}
}

func TestEvaluateRequest_ConflictAndBrokenPolicy(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.create(t, "cap", map[string]any{"display_name": "Cap vCPUs", "policy_type": "GLOBAL",
			"rego_code": "package steward.cap\n\nmain := {\"constraints\": {\"vcpu.count\": {\"maximum\": 4}}}\n"})
		e.create(t, "boost", map[string]any{"display_name": "Boost", "policy_type": "USER",
			"rego_code": "package steward.boost\n\nmain := {\"patch\": {\"vcpu\": {\"count\": 8}}}\n"})
		p := e.do(t, "POST", "/api/v1/policies:evaluateRequest", map[string]any{"service_instance": map[string]any{"spec": vmSpec()}}).
			problem(t, http.StatusConflict, "POLICY_CONFLICT")
		if p["policy_id"] != "boost" || p["field"] != "vcpu.count" || p["conflicting_policy_id"] != "cap" {
			t.Errorf("conflict %v should name the patching policy, the field and the constraint's policy", p)
		}
		e.do(t, "DELETE", "/api/v1/policies/boost", nil).want(t, http.StatusNoContent)

		big := vmSpec()
		big["vcpu"] = map[string]any{"count": 16}
		p = e.do(t, "POST", "/api/v1/policies:evaluateRequest", map[string]any{"service_instance": map[string]any{"spec": big}}).
			problem(t, http.StatusNotAcceptable, "POLICY_REJECTED")
		if p["policy_id"] != "cap" {
			t.Errorf("a request over the cap is rejected by the capping policy: %v", p)
		}

		e.create(t, "broken", map[string]any{"display_name": "Broken", "policy_type": "USER",
			"rego_code": "package steward.broken\n\nmain := true\n"})
		p = e.do(t, "POST", "/api/v1/policies:evaluateRequest", map[string]any{"service_instance": map[string]any{"spec": vmSpec()}}).
			problem(t, http.StatusInternalServerError, "POLICY_EVALUATION_FAILED")
		if p["policy_id"] != "broken" {
			t.Errorf("evaluation failure %v should name the policy", p)
		}
	})
}

func TestEvaluateRequest_RequiresSpecAndServiceType(t *testing.T) {
	t.Parallel()
	e := setup(t, store.SQLite)
	for name, body := range map[string]any{
		"no service_instance": map[string]any{},
		"no spec":             map[string]any{"service_instance": map[string]any{}},
		"no service_type":     map[string]any{"service_instance": map[string]any{"spec": map[string]any{"vcpu": 2}}},
		"spec not an object":  map[string]any{"service_instance": map[string]any{"spec": "vm"}},
	} {
		p := e.do(t, "POST", "/api/v1/policies:evaluateRequest", body).problem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if p["fields"] == nil {
			t.Errorf("%s: problem names no field: %v", name, p)
		}
	}
}
