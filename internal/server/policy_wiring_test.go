package server_test

import (
	"net/http"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// The policy chain sees the registry's providers: a constraint to a region
// picks the provider registered there, and a rejection answers 406.
func TestPolicies_EvaluateAgainstTheRegistry(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		for name, region := range map[string]string{"us-sp": "us-east-1", "eu-sp": "eu-west-1"} {
			reg := providertest.New(t).Registration(name, "vm")
			reg.Metadata = map[string]string{"region": region}
			s.Do(t, "POST", "/api/v1/providers", reg).Want(t, http.StatusCreated)
		}
		s.Do(t, "POST", "/api/v1/policies?id=eu-only", map[string]any{
			"display_name": "EU only", "policy_type": "GLOBAL", "priority": 10,
			"label_selector": map[string]string{"service_type": "vm"},
			"rego_code":      "package eu\nmain := {\"provider_constraints\": {\"metadata\": {\"region\": \"eu-west-1\"}}, \"patch\": {\"labels\": {\"residency\": \"eu\"}}}",
		}).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/policies", map[string]any{
			"display_name": "broken", "policy_type": "USER", "rego_code": "package broken\nmain := {",
		}).WantProblem(t, http.StatusBadRequest, "INVALID_POLICY")

		spec := map[string]any{"service_type": "vm", "vcpu": map[string]any{"count": 2}, "memory": map[string]any{"size": "2GB"},
			"guest_os": map[string]any{"type": "fedora-39"}}
		var res struct {
			Evaluated struct {
				Spec map[string]any `json:"spec"`
			} `json:"evaluated_service_instance"`
			SelectedProvider string `json:"selected_provider"`
			Status           string `json:"status"`
		}
		for _, path := range []string{"/api/v1/policies:evaluateRequest", "/api/v1alpha1/policies:evaluateRequest"} {
			s.Do(t, "POST", path, map[string]any{"service_instance": map[string]any{"spec": spec}}).Want(t, http.StatusOK).JSON(t, &res)
			if res.SelectedProvider != "eu-sp" || res.Status != "MODIFIED" || res.Evaluated.Spec["labels"] == nil {
				t.Fatalf("%s = %+v, want eu-sp, MODIFIED with the patched labels", path, res)
			}
		}

		s.Do(t, "POST", "/api/v1/policies", map[string]any{
			"display_name": "no big vms", "policy_type": "TENANT", "priority": 5,
			"rego_code": "package nobig\nmain := {\"rejected\": true, \"rejection_reason\": \"too big\"} if { input.spec.vcpu.count > 1 }",
		}).Want(t, http.StatusCreated)
		r := s.Do(t, "POST", "/api/v1/policies:evaluateRequest", map[string]any{"service_instance": map[string]any{"spec": spec}})
		r.WantProblem(t, http.StatusNotAcceptable, "POLICY_REJECTED")
	})
}
