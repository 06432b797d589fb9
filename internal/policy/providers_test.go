package policy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEvaluate_Providers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		reason   string
		policies []Policy
		exclude  []string
		want     string
		wantPC   ProviderConstraints
		wantErr  *wantErr
	}{{
		name:     "PolicySelects",
		reason:   "selected_provider becomes the selection",
		policies: []Policy{pol("pick", TypeGlobal, 1, `main := {"selected_provider": "kv-west"}`)},
		want:     "kv-west",
	}, {
		name:   "LaterPolicyReselects",
		reason: "a later policy may change the selection, and sees the earlier one as input.provider",
		policies: []Policy{
			pol("g", TypeGlobal, 1, `main := {"selected_provider": "kv-west"}`),
			pol("u", TypeUser, 1, `main := {"selected_provider": "kv-east"} if input.provider == "kv-west"`),
		},
		want: "kv-east",
	}, {
		name:     "InputOffersAvailableLessExcluded",
		reason:   "available_providers omits the excluded ones",
		policies: []Policy{pol("first", TypeGlobal, 1, `main := {"selected_provider": input.available_providers[0].name}`)},
		exclude:  []string{"kv-east"},
		want:     "kv-west",
	}, {
		name:     "ExcludedProviderConflicts",
		reason:   "a policy may not select a provider the request excludes",
		policies: []Policy{pol("pick", TypeGlobal, 1, `main := {"selected_provider": "kv-east"}`)},
		exclude:  []string{"kv-east"},
		wantErr:  &wantErr{kind: ErrConflict, policy: "pick", field: "provider"},
	}, {
		name:     "UnknownProviderConflicts",
		reason:   "a policy may only select a registered provider",
		policies: []Policy{pol("pick", TypeGlobal, 1, `main := {"selected_provider": "nope"}`)},
		wantErr:  &wantErr{kind: ErrConflict, policy: "pick", field: "provider"},
	}, {
		name:     "ProviderOfAnotherServiceTypeConflicts",
		reason:   "the selected provider must serve the request's service type",
		policies: []Policy{pol("pick", TypeGlobal, 1, `main := {"selected_provider": "db-east"}`)},
		wantErr:  &wantErr{kind: ErrConflict, policy: "pick", field: "provider"},
	}, {
		name:   "AllowListExcludesSelection",
		reason: "a selection outside the allow list conflicts",
		policies: []Policy{
			pol("g", TypeGlobal, 1, `main := {"provider_constraints": {"allow_list": ["kv-west"]}}`),
			pol("u", TypeUser, 1, `main := {"selected_provider": "kv-east"}`),
		},
		wantErr: &wantErr{kind: ErrConflict, policy: "u", field: "provider"},
	}, {
		name:   "PatternsExcludeSelection",
		reason: "every pattern (RE2, searched as DCM does) must match the selected provider's name",
		policies: []Policy{
			pol("g", TypeGlobal, 1, `main := {"provider_constraints": {"patterns": ["^kv-", "west"]}}`),
			pol("u", TypeUser, 1, `main := {"selected_provider": "kv-east"}`),
		},
		wantErr: &wantErr{kind: ErrConflict, policy: "u", field: "provider"},
	}, {
		name:   "GlobsExcludeSelection",
		reason: "every glob (path.Match on the whole name) must match the selected provider's name",
		policies: []Policy{
			pol("g", TypeGlobal, 1, `main := {"provider_constraints": {"globs": ["kv-*", "*-west"]}}`),
			pol("u", TypeUser, 1, `main := {"selected_provider": "kv-east"}`),
		},
		wantErr: &wantErr{kind: ErrConflict, policy: "u", field: "provider"},
	}, {
		name:   "DCMAliasesSelectAndConstrain",
		reason: "selected_agent is selected_provider; service_provider_constraints (with DCM's older single pattern) and agent_constraints (with environments) are provider_constraints",
		policies: []Policy{
			pol("g", TypeGlobal, 1, `main := {"service_provider_constraints": {"pattern": "^kv"}}`),
			pol("t", TypeTenant, 1, `main := {"agent_constraints": {"environment_constraints": ["west", "north"]}}`),
			pol("u", TypeUser, 1, `main := {"selected_agent": input.available_agents[0].name} if input.agent_constraints.environment_constraints == ["west", "north"]`),
		},
		exclude: []string{"kv-east"},
		want:    "kv-west",
		wantPC:  ProviderConstraints{Patterns: []string{"^kv"}, Environments: []string{"west", "north"}},
	}, {
		name:   "AgentEnvironmentExcludesSelection",
		reason: "DCM's environment constraints match the provider's metadata environment",
		policies: []Policy{
			pol("g", TypeGlobal, 1, `main := {"agent_constraints": {"environment_constraints": {"patterns": ["^west$"]}}}`),
			pol("u", TypeUser, 1, `main := {"selected_agent": "kv-east"}`),
		},
		wantErr: &wantErr{kind: ErrConflict, policy: "u", field: "provider"},
	}, {
		name:   "MetadataAllowsSelection",
		reason: "a provider whose metadata has the required values may be selected; constraints accumulate",
		policies: []Policy{
			pol("g", TypeGlobal, 1, `main := {"provider_constraints": {"metadata": {"region": "west"}, "patterns": ["^kv-"]}}`),
			pol("t", TypeTenant, 1, `main := {"provider_constraints": {"allow_list": ["kv-west", "kv-east"]}}`),
			pol("u", TypeUser, 1, `main := {"selected_provider": "kv-west"}`),
		},
		want: "kv-west",
		wantPC: ProviderConstraints{AllowList: []string{"kv-west", "kv-east"}, Patterns: []string{"^kv-"},
			Metadata: map[string]string{"region": "west"}},
	}, {
		name:   "LaterConstraintsExcludeEarlierSelection",
		reason: "provider constraints that exclude the provider already selected conflict",
		policies: []Policy{
			pol("g", TypeGlobal, 1, `main := {"selected_provider": "kv-east"}`),
			pol("u", TypeUser, 1, `main := {"provider_constraints": {"metadata": {"region": "west"}}}`),
		},
		wantErr: &wantErr{kind: ErrConflict, policy: "u", field: "provider"},
	}, {
		name:   "DisjointAllowListsConflict",
		reason: "allow lists intersect; an empty intersection allows nothing",
		policies: []Policy{
			pol("g", TypeGlobal, 1, `main := {"provider_constraints": {"allow_list": ["kv-east"]}}`),
			pol("u", TypeUser, 1, `main := {"provider_constraints": {"allow_list": ["kv-west"]}}`),
		},
		wantErr: &wantErr{kind: ErrConflict, policy: "u", field: "provider"},
	}, {
		name:   "ContradictoryMetadataConflicts",
		reason: "one metadata key cannot be required to hold two values",
		policies: []Policy{
			pol("g", TypeGlobal, 1, `main := {"provider_constraints": {"metadata": {"region": "east"}}}`),
			pol("u", TypeUser, 1, `main := {"provider_constraints": {"metadata": {"region": "west"}}}`),
		},
		wantErr: &wantErr{kind: ErrConflict, policy: "u", field: "provider"},
	}, {
		name:     "MalformedPatternIsAnEvaluationError",
		reason:   "a regular expression that does not compile is the policy's bug",
		policies: []Policy{pol("g", TypeGlobal, 1, `main := {"provider_constraints": {"patterns": ["(kv"]}}`)},
		wantErr:  &wantErr{kind: ErrEvaluation, policy: "g"},
	}, {
		name:     "MalformedGlobIsAnEvaluationError",
		reason:   "a glob that cannot match anything is the policy's bug",
		policies: []Policy{pol("g", TypeGlobal, 1, `main := {"provider_constraints": {"globs": ["[kv"]}}`)},
		wantErr:  &wantErr{kind: ErrEvaluation, policy: "g"},
	}, {
		name:     "DifferentSelectionsUnderAliasesAreAnEvaluationError",
		reason:   "selected_provider and selected_agent naming different providers cannot both be obeyed",
		policies: []Policy{pol("g", TypeGlobal, 1, `main := {"selected_provider": "kv-east", "selected_agent": "kv-west"}`)},
		wantErr:  &wantErr{kind: ErrEvaluation, policy: "g"},
	}, {
		name:     "UnknownKeyAtRunTimeIsAnEvaluationError",
		reason:   "a member computed at run time that the contract does not know fails closed",
		policies: []Policy{pol("g", TypeGlobal, 1, "main := {k: [\"kv-west\"] | k := concat(\"_\", [\"provider\", \"allowlist\"])}")},
		wantErr:  &wantErr{kind: ErrEvaluation, policy: "g"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := evaluate(context.Background(), chainOf(t, tc.policies...), newSchemaCache(),
				EvaluateParams{Spec: vm(), AvailableProviders: testProviders, ExcludeProviders: tc.exclude})
			tc.wantErr.check(t, err, tc.reason)
			if tc.wantErr != nil {
				return
			}
			if got.SelectedProvider != tc.want {
				t.Errorf("%s\nSelectedProvider = %q, want %q", tc.reason, got.SelectedProvider, tc.want)
			}
			if diff := cmp.Diff(tc.wantPC, got.ProviderConstraints); diff != "" {
				t.Errorf("%s\nProviderConstraints: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestEvaluate_PolicyErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"main is not an object":      `main := true`,
		"member of the wrong type":   `main := {"patch": "bigger"}`,
		"conflicting rule values":    "main := {\"patch\": {}} if true\nmain := {\"patch\": {\"a\": 2}} if true",
		"schema that does not build": `main := {"constraints": {"vcpu.count": {"maximum": "four"}}}`,
		"schema loading a file":      `main := {"constraints": {"vcpu.count": {"$ref": "file:///etc/passwd"}}}`,
		// Create refuses this (400); a policy stored before that check
		// still loads, and fails the chain when it answers the member.
		"member the contract does not know": `main := {"colour": "red"}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := evaluate(context.Background(), chainOf(t, pol("bad", TypeGlobal, 1, body)), newSchemaCache(), EvaluateParams{Spec: vm()})
			(&wantErr{kind: ErrEvaluation, policy: "bad"}).check(t, err, "a broken policy fails the chain closed")
		})
	}
}

func TestPickProvider(t *testing.T) {
	t.Parallel()
	p := func(name, status string, live int, capacity int64, region string, types ...string) ProviderInfo {
		pi := ProviderInfo{Name: name, Status: status, LiveInstances: live, ServiceTypes: types,
			Metadata: map[string]string{"region": region}}
		if capacity >= 0 {
			pi.Capacity = map[string]int64{CapacityInstances: capacity}
		}
		return pi
	}
	cases := []struct {
		name      string
		reason    string
		providers []ProviderInfo
		params    PickParams
		want      string
	}{{
		name:      "FewestLiveInstances",
		reason:    "the least loaded provider wins",
		providers: []ProviderInfo{p("a", ProviderHealthy, 5, -1, "east", "vm"), p("b", ProviderHealthy, 2, -1, "east", "vm")},
		want:      "b",
	}, {
		name:      "ThenName",
		reason:    "equal loads are broken by name",
		providers: []ProviderInfo{p("b", ProviderHealthy, 2, -1, "east", "vm"), p("a", ProviderHealthy, 2, -1, "east", "vm")},
		want:      "a",
	}, {
		name:   "OnlyHealthyServingWithCapacity",
		reason: "unhealthy, other service types, full and excluded providers are passed over",
		providers: []ProviderInfo{
			p("degraded", "degraded", 0, -1, "east", "vm"), p("db", ProviderHealthy, 0, -1, "east", "db"),
			p("full", ProviderHealthy, 3, 3, "east", "vm"), p("excluded", ProviderHealthy, 0, -1, "east", "vm"),
			p("busy", ProviderHealthy, 9, 10, "east", "vm"),
		},
		params: PickParams{Exclude: []string{"excluded"}},
		want:   "busy",
	}, {
		name:      "ProviderConstraints",
		reason:    "the policies' provider constraints apply",
		providers: []ProviderInfo{p("a", ProviderHealthy, 0, -1, "east", "vm"), p("b", ProviderHealthy, 9, -1, "west", "vm")},
		params:    PickParams{Constraints: ProviderConstraints{Metadata: map[string]string{"region": "west"}}},
		want:      "b",
	}, {
		name:   "ServingTheProject",
		reason: "a provider granted other projects is passed over, however idle",
		providers: []ProviderInfo{
			{Name: "team-a-only", ServiceTypes: []string{"vm"}, Status: ProviderHealthy, Projects: []string{"team-a"}},
			p("shared", ProviderHealthy, 9, -1, "east", "vm"),
		},
		params: PickParams{Project: "team-b"},
		want:   "shared",
	}, {
		name:      "NoneFits",
		reason:    "ErrNoProvider when nothing qualifies",
		providers: []ProviderInfo{p("full", ProviderHealthy, 1, 1, "east", "vm")},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.params.Providers, tc.params.ServiceType = tc.providers, "vm"
			got, err := PickProvider(tc.params)
			if tc.want == "" {
				if !errors.Is(err, ErrNoProvider) {
					t.Fatalf("%s\nPickProvider = %q, %v; want ErrNoProvider", tc.reason, got.Name, err)
				}
				return
			}
			if err != nil || got.Name != tc.want {
				t.Fatalf("%s\nPickProvider = %q, %v; want %q", tc.reason, got.Name, err, tc.want)
			}
		})
	}
}

// An order no provider may serve for its project says so: the user learns
// the grant is missing, not only that nothing is healthy.
func TestPickProvider_NamesTheProjectNoneServes(t *testing.T) {
	t.Parallel()
	_, err := PickProvider(PickParams{ServiceType: "vm", Project: "team-b", Providers: []ProviderInfo{
		{Name: "team-a-only", ServiceTypes: []string{"vm"}, Status: ProviderHealthy, Projects: []string{"team-a"}}}})
	if !errors.Is(err, ErrNoProvider) || !strings.Contains(err.Error(), `to project "team-b"`) {
		t.Fatalf("PickProvider = %v; want ErrNoProvider naming project team-b", err)
	}
}
