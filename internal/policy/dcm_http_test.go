package policy_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/policy"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// The policies in these tests are written as DCM's documentation writes
// them: package policies.<name>, a main object with "rejected": false and
// DCM's member names.

// dcmPolicy is a policy body whose main is the given members.
func dcmPolicy(name, level string, priority int, members string) map[string]any {
	return map[string]any{"display_name": name, "policy_type": level, "priority": priority,
		"rego_code": fmt.Sprintf("package policies.%s\n\nmain := {\n\t\"rejected\": false,\n\t%s,\n}\n",
			strings.ReplaceAll(name, "-", "_"), members)}
}

func TestDCMPolicies_ConstraintConflictsNameBothPolicies(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		levels := []struct{ name, first, second string }{
			{"GLOBAL then TENANT", "GLOBAL", "TENANT"},
			{"TENANT then USER", "TENANT", "USER"},
			{"GLOBAL by priority", "GLOBAL", "GLOBAL"},
		}
		cases := []struct {
			name, field, first, second string
			conflict                   bool
		}{
			{"loosening a maximum", "vcpu.count", `{"maximum": 4}`, `{"maximum": 8}`, true},
			{"loosening a minimum", "vcpu.count", `{"minimum": 2}`, `{"minimum": 1}`, true},
			{"overlapping enums narrow to the intersection", "region", `{"enum": ["us-east-1", "us-west-2"]}`, `{"enum": ["us-east-1", "eu-west-1"]}`, false},
			{"a const outside an enum", "region", `{"enum": ["us-east-1", "us-west-2"]}`, `{"const": "eu-west-1"}`, true},
			{"an enum that holds an earlier const", "region", `{"const": "us-east-1"}`, `{"enum": ["us-east-1", "eu-west-1"]}`, false},
			{"disjoint enums", "region", `{"enum": ["us-east-1"]}`, `{"enum": ["eu-west-1"]}`, true},
			{"two consts", "region", `{"const": "us-east-1"}`, `{"const": "eu-west-1"}`, true},
			{"crossing bounds", "vcpu.count", `{"maximum": 4}`, `{"minimum": 8}`, true},
			{"tightening a maximum", "vcpu.count", `{"maximum": 8}`, `{"maximum": 4}`, false},
			{"narrowing an enum", "region", `{"enum": ["us-east-1", "us-west-2"]}`, `{"enum": ["us-east-1"]}`, false},
		}
		for _, lv := range levels {
			for i, tc := range cases {
				first := fmt.Sprintf("first-%d", i)
				second := fmt.Sprintf("second-%d", i)
				e.create(t, first, dcmPolicy(first, lv.first, 10,
					fmt.Sprintf(`"constraints": {%q: %s}`, tc.field, tc.first)))
				e.create(t, second, dcmPolicy(second, lv.second, 20,
					fmt.Sprintf(`"constraints": {%q: %s}`, tc.field, tc.second)))

				r := e.do(t, "POST", "/api/v1/policies:evaluateRequest", map[string]any{"service_instance": map[string]any{"spec": vmSpec()}})
				if !tc.conflict {
					r.want(t, http.StatusOK)
				} else {
					p := r.problem(t, http.StatusConflict, "POLICY_CONFLICT")
					if p["policy_id"] != second || p["conflicting_policy_id"] != first || p["field"] != tc.field ||
						p["policy_name"] != second || p["conflicting_policy_name"] != first {
						t.Errorf("%s, %s: conflict %v should name %s, %s and %s", lv.name, tc.name, p, second, first, tc.field)
					}
					if !strings.Contains(p["detail"].(string), first) {
						t.Errorf("%s, %s: detail %q does not name the earlier policy", lv.name, tc.name, p["detail"])
					}
				}
				e.do(t, "DELETE", "/api/v1/policies/"+first, nil).want(t, http.StatusNoContent)
				e.do(t, "DELETE", "/api/v1/policies/"+second, nil).want(t, http.StatusNoContent)
			}
		}
	})
}

// TestDCMPolicies_EnumsIntersect is DCM's own test: two policies' region
// enums overlap in {us-east-1, eu-west-1}; DCM approves a request in the
// intersection, so Steward does too. A region only one policy allows is
// rejected by the other, and a third enum that leaves nothing conflicts.
func TestDCMPolicies_EnumsIntersect(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.create(t, "regions-a", dcmPolicy("regions-a", "GLOBAL", 10,
			`"constraints": {"region": {"enum": ["us-east-1", "us-west-2", "eu-west-1"]}}`))
		e.create(t, "regions-b", dcmPolicy("regions-b", "USER", 10,
			`"constraints": {"region": {"enum": ["us-east-1", "eu-west-1", "ap-south-1"]}}`))
		request := func(region string) map[string]any {
			spec := vmSpec()
			spec["region"] = region
			return map[string]any{"service_instance": map[string]any{"spec": spec}, "dry_run_placement": false}
		}
		for _, region := range []string{"us-east-1", "eu-west-1"} {
			var ev evaluation
			e.do(t, "POST", "/api/v1/policies:evaluateRequest", request(region)).want(t, http.StatusOK).json(t, &ev)
			if ev.Status != "APPROVED" || ev.EvaluatedServiceInstance.Spec["region"] != region {
				t.Errorf("region %s: %+v, want it approved unchanged", region, ev)
			}
		}
		for region, by := range map[string]string{"us-west-2": "regions-b", "ap-south-1": "regions-a"} {
			p := e.do(t, "POST", "/api/v1/policies:evaluateRequest", request(region)).
				problem(t, http.StatusNotAcceptable, "POLICY_REJECTED")
			if p["policy_id"] != by {
				t.Errorf("region %s outside the intersection: %v, want a rejection by %s", region, p, by)
			}
		}

		e.create(t, "regions-c", dcmPolicy("regions-c", "USER", 20,
			`"constraints": {"region": {"enum": ["us-west-2", "ap-south-1"]}}`))
		p := e.do(t, "POST", "/api/v1/policies:evaluateRequest", request("us-east-1")).
			problem(t, http.StatusConflict, "POLICY_CONFLICT")
		if p["policy_id"] != "regions-c" || p["conflicting_policy_id"] != "regions-b" || p["field"] != "region" ||
			p["keyword"] != "enum" {
			t.Errorf("an empty intersection: %v, want regions-c against regions-b on region, enum", p)
		}
	})
}

// dcmProviders are providers named as DCM deployments name them.
func dcmProviders() []policy.ProviderInfo {
	return []policy.ProviderInfo{
		{Name: "aws-us-east", ServiceTypes: []string{"vm"}, Metadata: map[string]string{"environment": "prod"}, Status: "healthy", LiveInstances: 9},
		{Name: "aws-eu-west", ServiceTypes: []string{"vm"}, Metadata: map[string]string{"environment": "dev"}, Status: "healthy", LiveInstances: 5},
		{Name: "kubevirt-lab", ServiceTypes: []string{"vm"}, Metadata: map[string]string{"environment": "dev"}, Status: "healthy", LiveInstances: 1},
	}
}

// setupDCM is a replica with dcmProviders registered, and a VM request
// for evaluateRequest.
func setupDCM(t *testing.T, engine store.Engine) (env, map[string]any) {
	t.Helper()
	e := setup(t, engine)
	e.providers.set(dcmProviders()...)
	return e, map[string]any{"service_instance": map[string]any{"spec": vmSpec()}}
}

// evaluateFull posts a request to evaluateRequest and expects 200.
func (e env) evaluateFull(t *testing.T, body map[string]any) fullEvaluation {
	t.Helper()
	var ev fullEvaluation
	e.do(t, "POST", "/api/v1/policies:evaluateRequest", body).want(t, http.StatusOK).json(t, &ev)
	return ev
}

type fullEvaluation struct {
	evaluation
	SelectedBy          string                     `json:"selected_by"`
	ProviderConstraints policy.ProviderConstraints `json:"provider_constraints"`
}

func TestDCMPolicies_ProviderPatternsAreRegularExpressions(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e, req := setupDCM(t, engine)
		for _, tc := range []struct {
			patterns string
			want     string
		}{
			{`["^aws"]`, "aws-eu-west"},          // anchored: kubevirt-lab is out, the least loaded aws one wins
			{`[".*"]`, "kubevirt-lab"},           // everything matches
			{`["^aws", "east$"]`, "aws-us-east"}, // all must match
			{`["west"]`, "aws-eu-west"},          // searched, not anchored, as in DCM
		} {
			e.create(t, "only-some", dcmPolicy("only-some", "GLOBAL", 1, `"provider_constraints": {"patterns": `+tc.patterns+`}`))
			if got := e.evaluateFull(t, req); got.SelectedProvider != tc.want || got.SelectedBy != "default_rule" {
				t.Errorf("patterns %s: selected %q by %q, want %q by the default rule", tc.patterns, got.SelectedProvider, got.SelectedBy, tc.want)
			}
			e.do(t, "DELETE", "/api/v1/policies/only-some", nil).want(t, http.StatusNoContent)
		}

		// Steward's globs are their own member, whole-name path.Match.
		e.create(t, "globbed", dcmPolicy("globbed", "GLOBAL", 1, `"provider_constraints": {"globs": ["aws-*-east"]}`))
		if got := e.evaluateFull(t, req); got.SelectedProvider != "aws-us-east" {
			t.Errorf("glob aws-*-east: selected %q", got.SelectedProvider)
		}
		e.do(t, "DELETE", "/api/v1/policies/globbed", nil).want(t, http.StatusNoContent)

		// A pattern that is not RE2 fails the chain closed, naming the policy.
		e.create(t, "broken-re", dcmPolicy("broken-re", "GLOBAL", 1, `"provider_constraints": {"patterns": ["(aws"]}`))
		p := e.do(t, "POST", "/api/v1/policies:evaluateRequest", req).problem(t, http.StatusInternalServerError, "POLICY_EVALUATION_FAILED")
		if p["policy_id"] != "broken-re" || !strings.Contains(p["detail"].(string), "(aws") {
			t.Errorf("a malformed pattern: %v should name the policy and the pattern", p)
		}
	})
}

func TestDCMPolicies_OutputKeyAliases(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e, req := setupDCM(t, engine)
		for _, tc := range []struct {
			name, members string
			want          string
			wantPC        policy.ProviderConstraints
		}{{
			name:    "selected_agent",
			members: `"selected_agent": "aws-us-east"`,
			want:    "aws-us-east",
		}, {
			name:    "service_provider_constraints allow_list",
			members: `"service_provider_constraints": {"allow_list": ["aws-us-east", "aws-eu-west"]}`,
			want:    "aws-eu-west",
			wantPC:  policy.ProviderConstraints{AllowList: []string{"aws-us-east", "aws-eu-west"}},
		}, {
			name:    "service_provider_constraints pattern (DCM's single pattern)",
			members: `"service_provider_constraints": {"pattern": "^aws-us"}`,
			want:    "aws-us-east",
			wantPC:  policy.ProviderConstraints{Patterns: []string{"^aws-us"}},
		}, {
			name:    "agent_constraints with environments",
			members: `"agent_constraints": {"patterns": ["^aws"], "environment_constraints": ["prod"]}`,
			want:    "aws-us-east",
			wantPC:  policy.ProviderConstraints{Patterns: []string{"^aws"}, Environments: []string{"prod"}},
		}} {
			e.create(t, "alias", dcmPolicy("alias", "GLOBAL", 1, tc.members))
			got := e.evaluateFull(t, req)
			if got.SelectedProvider != tc.want {
				t.Errorf("%s: selected %q, want %q", tc.name, got.SelectedProvider, tc.want)
			}
			if !slices.Equal(got.ProviderConstraints.AllowList, tc.wantPC.AllowList) ||
				!slices.Equal(got.ProviderConstraints.Patterns, tc.wantPC.Patterns) ||
				!slices.Equal(got.ProviderConstraints.Environments, tc.wantPC.Environments) {
				t.Errorf("%s: provider constraints %+v, want %+v", tc.name, got.ProviderConstraints, tc.wantPC)
			}
			e.do(t, "DELETE", "/api/v1/policies/alias", nil).want(t, http.StatusNoContent)
		}

		// DCM's input names: available_agents (with environment), agent,
		// agent_constraints.
		e.create(t, "dev-agent", map[string]any{"display_name": "dev agent", "policy_type": "GLOBAL", "priority": 1,
			"rego_code": `package policies.dev_agent

dev_agents := [a.name | some a in input.available_agents; a.environment == "dev"]

main := {"rejected": false, "agent_constraints": {"allow_list": dev_agents}, "selected_agent": dev_agents[0]}
`})
		e.create(t, "sees-agent", map[string]any{"display_name": "sees agent", "policy_type": "USER", "priority": 1,
			"rego_code": `package policies.sees_agent

main := {"rejected": false, "patch": {"placed_on": input.agent, "allowed": input.agent_constraints.allow_list}}
`})
		got := e.evaluateFull(t, req)
		if got.SelectedProvider != "aws-eu-west" || got.EvaluatedServiceInstance.Spec["placed_on"] != "aws-eu-west" ||
			fmt.Sprint(got.EvaluatedServiceInstance.Spec["allowed"]) != "[aws-eu-west kubevirt-lab]" {
			t.Errorf("DCM input names: selected %q, spec %v", got.SelectedProvider, got.EvaluatedServiceInstance.Spec)
		}
		e.do(t, "DELETE", "/api/v1/policies/dev-agent", nil).want(t, http.StatusNoContent)
		e.do(t, "DELETE", "/api/v1/policies/sees-agent", nil).want(t, http.StatusNoContent)

		// The alias restricts as the canonical member does: a selection it
		// excludes conflicts.
		e.create(t, "lab-only", dcmPolicy("lab-only", "GLOBAL", 1, `"service_provider_constraints": {"allow_list": ["kubevirt-lab"]}`))
		e.create(t, "wants-aws", dcmPolicy("wants-aws", "USER", 1, `"selected_agent": "aws-us-east"`))
		p := e.do(t, "POST", "/api/v1/policies:evaluateRequest", req).problem(t, http.StatusConflict, "POLICY_CONFLICT")
		if p["policy_id"] != "wants-aws" || p["conflicting_policy_id"] != "lab-only" {
			t.Errorf("selection outside the alias's allow list: %v", p)
		}
	})
}

func TestDCMPolicies_UnknownOutputKeys(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.providers.set(dcmProviders()...)

		// Visible in the code: refused at create, naming the member.
		for key, members := range map[string]string{
			"colour":                        `"colour": "red"`,
			"provider_constraints.alowlist": `"provider_constraints": {"alowlist": ["aws-us-east"]}`,
		} {
			p := e.do(t, "POST", "/api/v1/policies?id=static-unknown", dcmPolicy("static-unknown", "GLOBAL", 1, members)).
				problem(t, http.StatusBadRequest, "INVALID_POLICY")
			if errs := fmt.Sprint(p["errors"]); !strings.Contains(errs, "main."+key+" is not part of the policy contract") {
				t.Errorf("create with %s: errors %s should name main.%s", key, errs, key)
			}
		}
		// As a member rule too.
		p := e.do(t, "POST", "/api/v1/policies?id=member-rule", map[string]any{"display_name": "member rule", "policy_type": "GLOBAL",
			"rego_code": "package policies.member_rule\n\nmain.rejected := false\n\nmain.colour := \"red\"\n"}).
			problem(t, http.StatusBadRequest, "INVALID_POLICY")
		if !strings.Contains(fmt.Sprint(p["errors"]), "main.colour") {
			t.Errorf("member rule main.colour: %v", p)
		}

		// A change to an existing policy is checked the same way.
		e.create(t, "fine", dcmPolicy("fine", "GLOBAL", 1, `"patch": {"a": 1}`))
		p = e.do(t, "PATCH", "/api/v1/policies/fine", map[string]any{
			"rego_code": "package policies.fine\n\nmain := {\"rejected\": false, \"selected_agnet\": \"aws-us-east\"}\n"}).
			problem(t, http.StatusBadRequest, "INVALID_POLICY")
		if !strings.Contains(fmt.Sprint(p["errors"]), "main.selected_agnet") {
			t.Errorf("PATCH with main.selected_agnet: %v", p)
		}
		e.do(t, "DELETE", "/api/v1/policies/fine", nil).want(t, http.StatusNoContent)

		// Computed at run time: the chain fails closed, naming the member.
		e.create(t, "dynamic-unknown", map[string]any{"display_name": "dynamic unknown", "policy_type": "GLOBAL",
			"rego_code": "package policies.dynamic_unknown\n\nmain := object.union({\"rejected\": false}, {input.spec.key: [\"aws-us-east\"]})\n"})
		spec := vmSpec()
		spec["key"] = "provider_allow_list"
		p = e.do(t, "POST", "/api/v1/policies:evaluateRequest", map[string]any{"service_instance": map[string]any{"spec": spec}}).
			problem(t, http.StatusInternalServerError, "POLICY_EVALUATION_FAILED")
		if p["policy_id"] != "dynamic-unknown" || p["output_key"] != "provider_allow_list" {
			t.Errorf("an unknown member at run time: %v should name the policy and the member", p)
		}
		// The same policy with a member it knows is applied.
		spec["key"] = "selected_agent"
		e.do(t, "POST", "/api/v1/policies:evaluateRequest", map[string]any{"service_instance": map[string]any{"spec": spec}}).
			problem(t, http.StatusInternalServerError, "POLICY_EVALUATION_FAILED") // a list is not a provider name
		e.do(t, "DELETE", "/api/v1/policies/dynamic-unknown", nil).want(t, http.StatusNoContent)
	})
}

func TestDCMPolicies_SelectorMatchesSpecLabels(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.create(t, "prod-only", map[string]any{"display_name": "prod only", "policy_type": "GLOBAL",
			"label_selector": map[string]string{"env": "prod"},
			"rego_code":      "package policies.prod_only\n\nmain := {\"rejected\": false, \"patch\": {\"ha\": true}}\n"})
		withLabels := func(specLabels map[string]any, labels map[string]string) map[string]any {
			spec := vmSpec()
			if specLabels != nil {
				spec["metadata"] = map[string]any{"labels": specLabels}
			}
			return map[string]any{"service_instance": map[string]any{"spec": spec, "labels": labels}}
		}
		for _, tc := range []struct {
			name       string
			specLabels map[string]any
			labels     map[string]string
			applies    bool
		}{
			{"spec metadata.labels, as DCM sends them", map[string]any{"env": "prod"}, nil, true},
			{"the request's labels", nil, map[string]string{"env": "prod"}, true},
			{"neither", map[string]any{"tier": "web"}, map[string]string{"team": "a"}, false},
			{"both: the request's labels win", map[string]any{"env": "prod"}, map[string]string{"env": "dev"}, false},
			{"both, the other way", map[string]any{"env": "dev"}, map[string]string{"env": "prod"}, true},
		} {
			got := e.evaluateFull(t, withLabels(tc.specLabels, tc.labels))
			if applied := slices.Contains(got.AppliedPolicies, "prod-only"); applied != tc.applies {
				t.Errorf("%s: applied %v, want %v", tc.name, got.AppliedPolicies, tc.applies)
			}
		}
	})
}

func TestEvaluateRequest_DryRunPlacement(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e, req := setupDCM(t, engine)
		if got := e.evaluateFull(t, req); got.SelectedProvider != "kubevirt-lab" || got.SelectedBy != "default_rule" {
			t.Errorf("by default: selected %q by %q; want the default rule's pick", got.SelectedProvider, got.SelectedBy)
		}
		req["dry_run_placement"] = false
		if got := e.evaluateFull(t, req); got.SelectedProvider != "" || got.SelectedBy != "" {
			t.Errorf("dry_run_placement false: selected %q by %q; want the policies' answer alone (none)", got.SelectedProvider, got.SelectedBy)
		}
		e.create(t, "picks", dcmPolicy("picks", "GLOBAL", 1, `"selected_provider": "aws-us-east"`))
		if got := e.evaluateFull(t, req); got.SelectedProvider != "aws-us-east" || got.SelectedBy != "policy" {
			t.Errorf("dry_run_placement false with a selecting policy: selected %q by %q", got.SelectedProvider, got.SelectedBy)
		}
		req["dry_run_placement"] = "no"
		e.do(t, "POST", "/api/v1/policies:evaluateRequest", req).problem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
	})
}
