package policy

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pol is a policy for chain tests: id, level, priority and the body of its
// module (package t["<id>"] is prepended).
func pol(id string, t Type, priority int, body string, selector ...string) Policy {
	sel := map[string]string{}
	for i := 0; i+1 < len(selector); i += 2 {
		sel[selector[i]] = selector[i+1]
	}
	return Policy{ID: id, DisplayName: "policy " + id, PolicyType: t, Priority: priority, LabelSelector: sel, Enabled: true,
		RegoCode: fmt.Sprintf("package t[%q]\n\n%s\n", id, body)}
}

// appendTrail patches the policy's id onto spec.trail, so the final trail
// shows which policies ran, in which order.
func appendTrail(id string) string {
	return fmt.Sprintf(`main := {"patch": {"trail": array.concat(object.get(input.spec, "trail", []), [%q])}}`, id)
}

func chainOf(t testing.TB, ps ...Policy) []entry {
	t.Helper()
	snap, err := buildSnapshot(context.Background(), 1, ps, nil, nil, "")
	if err != nil {
		t.Fatalf("compile the chain: %v", err)
	}
	return snap.chain
}

var testProviders = []ProviderInfo{
	{Name: "kv-east", ServiceTypes: []string{"vm"}, Metadata: map[string]string{"region": "east", "environment": "east"}, Status: ProviderHealthy},
	{Name: "kv-west", ServiceTypes: []string{"vm"}, Metadata: map[string]string{"region": "west", "environment": "west"}, Status: ProviderHealthy},
	{Name: "db-east", ServiceTypes: []string{"db"}, Metadata: map[string]string{"region": "east", "environment": "east"}, Status: ProviderHealthy},
}

func vm(extra ...any) map[string]any {
	spec := map[string]any{"service_type": "vm", "vcpu": map[string]any{"count": 2.0}}
	for i := 0; i+1 < len(extra); i += 2 {
		spec[extra[i].(string)] = extra[i+1]
	}
	return spec
}

// wantErr describes an expected chain error: its kind and whom it names.
type wantErr struct {
	kind   error // ErrRejected, ErrConflict, ErrEvaluation
	policy string
	field  string
}

func (w *wantErr) check(t *testing.T, err error, reason string) {
	t.Helper()
	if w == nil {
		if err != nil {
			t.Fatalf("%s\nEvaluate: unexpected error %v", reason, err)
		}
		return
	}
	if !errors.Is(err, w.kind) {
		t.Fatalf("%s\nEvaluate: error %v, want %v", reason, err, w.kind)
	}
	var rej *RejectedError
	var con *ConflictError
	var ev *EvaluationError
	got := wantErr{kind: w.kind}
	switch {
	case errors.As(err, &rej):
		got.policy = rej.Policy.ID
	case errors.As(err, &con):
		got.policy, got.field = con.Policy.ID, con.Field
	case errors.As(err, &ev):
		got.policy = ev.Policy.ID
	}
	if got != *w {
		t.Fatalf("%s\nEvaluate error %v names %+v, want %+v", reason, err, got, *w)
	}
}

func TestEvaluate_Chain(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		reason   string
		policies []Policy
		params   EvaluateParams
		want     Result
		wantErr  *wantErr
	}{{
		name:   "OrderIsLevelThenPriorityThenID",
		reason: "GLOBAL runs before TENANT before USER whatever their priorities; within a level lower priority first, then id",
		policies: []Policy{
			pol("u1", TypeUser, 1, appendTrail("u1")), pol("t1", TypeTenant, 900, appendTrail("t1")),
			pol("g2", TypeGlobal, 20, appendTrail("g2")), pol("g1", TypeGlobal, 10, appendTrail("g1")),
			pol("t0", TypeTenant, 900, appendTrail("t0")),
		},
		params: EvaluateParams{Spec: vm()},
		want: Result{Spec: vm("trail", []any{"g1", "g2", "t0", "t1", "u1"}), Status: StatusModified,
			Applied: []string{"g1", "g2", "t0", "t1", "u1"}},
	}, {
		name:   "LaterPolicyOverwritesAField",
		reason: "each policy sets size; the last in chain order (USER) wins",
		policies: []Policy{
			pol("u", TypeUser, 1, `main := {"patch": {"size": "user"}}`),
			pol("g", TypeGlobal, 1, `main := {"patch": {"size": "global"}}`),
			pol("t", TypeTenant, 1, `main := {"patch": {"size": "tenant"}}`),
		},
		params: EvaluateParams{Spec: vm()},
		want:   Result{Spec: vm("size", "user"), Status: StatusModified, Applied: []string{"g", "t", "u"}},
	}, {
		name:   "LabelSelector",
		reason: "service_type, project and labels select; a policy whose selector does not match does not run",
		policies: []Policy{
			pol("vm", TypeGlobal, 1, appendTrail("vm"), "service_type", "vm"),
			pol("db", TypeGlobal, 2, appendTrail("db"), "service_type", "db"),
			pol("prod", TypeGlobal, 3, appendTrail("prod"), "env", "prod"),
			pol("dev", TypeGlobal, 4, appendTrail("dev"), "env", "dev"),
			pol("proj", TypeGlobal, 5, appendTrail("proj"), "project", "team-a", "service_type", "vm"),
			pol("other", TypeGlobal, 6, appendTrail("other"), "project", "team-b"),
			pol("all", TypeGlobal, 7, appendTrail("all")),
		},
		params: EvaluateParams{Spec: vm(), Labels: map[string]string{"env": "prod"}, Project: "team-a"},
		want: Result{Spec: vm("trail", []any{"vm", "prod", "proj", "all"}), Status: StatusModified,
			Applied: []string{"vm", "prod", "proj", "all"}},
	}, {
		name:   "DisabledPolicyIgnored",
		reason: "a disabled policy is not in the chain",
		policies: []Policy{func() Policy {
			p := pol("off", TypeGlobal, 1, `main := {"rejected": true}`)
			p.Enabled = false
			return p
		}()},
		params: EvaluateParams{Spec: vm()},
		want:   Result{Spec: vm(), Status: StatusApproved},
	}, {
		name:     "RejectNamesThePolicy",
		reason:   "rejected stops the chain with the policy and its reason",
		policies: []Policy{pol("no-big", TypeGlobal, 1, `main := {"rejected": true, "rejection_reason": "too big"} if input.spec.vcpu.count > 1`), pol("later", TypeUser, 1, appendTrail("later"))},
		params:   EvaluateParams{Spec: vm()},
		wantErr:  &wantErr{kind: ErrRejected, policy: "no-big"},
	}, {
		name:     "UndefinedMainIsSkipped",
		reason:   "a main that is undefined for this request says nothing",
		policies: []Policy{pol("big-only", TypeGlobal, 1, `main := {"rejected": true} if input.spec.vcpu.count > 8`)},
		params:   EvaluateParams{Spec: vm()},
		want:     Result{Spec: vm(), Status: StatusApproved, Applied: []string{"big-only"}},
	}, {
		name:     "PatchToSameValueIsApproved",
		reason:   "status compares the specs, not whether a patch ran",
		policies: []Policy{pol("same", TypeGlobal, 1, `main := {"patch": {"vcpu": {"count": 2}}}`)},
		params:   EvaluateParams{Spec: vm()},
		want:     Result{Spec: vm(), Status: StatusApproved, Applied: []string{"same"}},
	}, {
		name:     "MergePatchDeletesWithNull",
		reason:   "patch is RFC 7386: null removes a member",
		policies: []Policy{pol("strip", TypeGlobal, 1, `main := {"patch": {"debug": null, "vcpu": {"pinned": true}}}`)},
		params:   EvaluateParams{Spec: vm("debug", true)},
		want: Result{Spec: map[string]any{"service_type": "vm", "vcpu": map[string]any{"count": 2.0, "pinned": true}},
			Status: StatusModified, Applied: []string{"strip"}},
	}, {
		name:   "LowerLevelMayTightenAHigherConstraint",
		reason: "a USER policy may lower a GLOBAL maximum; both apply",
		policies: []Policy{
			pol("g", TypeGlobal, 1, `main := {"constraints": {"vcpu.count": {"maximum": 4}}}`),
			pol("u", TypeUser, 1, `main := {"constraints": {"vcpu.count": {"maximum": 2}}}`),
		},
		params: EvaluateParams{Spec: vm()},
		want: Result{Spec: vm(), Status: StatusApproved, Applied: []string{"g", "u"},
			Constraints: map[string]any{"vcpu.count": map[string]any{"allOf": []any{
				map[string]any{"maximum": 4.0}, map[string]any{"maximum": 2.0}}}}},
	}, {
		name:   "LowerLevelMayRestateTheSameConstraint",
		reason: "the same schema changes nothing",
		policies: []Policy{
			pol("g", TypeGlobal, 1, `main := {"constraints": {"vcpu.count": {"maximum": 4}}}`),
			pol("u", TypeUser, 1, `main := {"constraints": {"vcpu.count": {"maximum": 4}}}`),
		},
		params: EvaluateParams{Spec: vm()},
		want: Result{Spec: vm(), Status: StatusApproved, Applied: []string{"g", "u"},
			Constraints: map[string]any{"vcpu.count": map[string]any{"maximum": 4.0}}},
	}, {
		name:   "TightenedConstraintsBothApply",
		reason: "a later, tighter constraint and the earlier one both hold: a patch over the tighter one conflicts",
		policies: []Policy{
			pol("g1", TypeGlobal, 1, `main := {"constraints": {"vcpu.count": {"maximum": 16}}}`),
			pol("g2", TypeGlobal, 2, `main := {"constraints": {"vcpu.count": {"maximum": 4}}}`),
			pol("u", TypeUser, 1, `main := {"patch": {"vcpu": {"count": 8}}}`),
		},
		params:  EvaluateParams{Spec: vm()},
		wantErr: &wantErr{kind: ErrConflict, policy: "u", field: "vcpu.count"},
	}, {
		name:   "PatchBreakingAConstraintConflicts",
		reason: "a later policy's patch may not break an earlier constraint",
		policies: []Policy{
			pol("cap", TypeGlobal, 1, `main := {"constraints": {"vcpu.count": {"maximum": 4}}}`),
			pol("boost", TypeTenant, 1, `main := {"patch": {"vcpu": {"count": 8}}}`),
		},
		params:  EvaluateParams{Spec: vm()},
		wantErr: &wantErr{kind: ErrConflict, policy: "boost", field: "vcpu.count"},
	}, {
		name:   "ConstraintAgainstAnEarlierPatchConflicts",
		reason: "a constraint that the value an earlier policy patched in breaks is a conflict too",
		policies: []Policy{
			pol("boost", TypeGlobal, 1, `main := {"patch": {"vcpu": {"count": 8}}}`),
			pol("cap", TypeTenant, 1, `main := {"constraints": {"vcpu.count": {"maximum": 4}}}`),
		},
		params:  EvaluateParams{Spec: vm()},
		wantErr: &wantErr{kind: ErrConflict, policy: "cap", field: "vcpu.count"},
	}, {
		name:     "RequestBreakingAConstraintIsRejected",
		reason:   "the request's own value breaking a constraint is a rejection by the constraining policy",
		policies: []Policy{pol("cap", TypeGlobal, 1, `main := {"constraints": {"vcpu.count": {"maximum": 1}}}`)},
		params:   EvaluateParams{Spec: vm()},
		wantErr:  &wantErr{kind: ErrRejected, policy: "cap"},
	}, {
		name:     "ClampingPatchFixesTheRequest",
		reason:   "a policy may constrain a field and patch the request's value into range in one answer",
		policies: []Policy{pol("clamp", TypeGlobal, 1, `main := {"constraints": {"vcpu.count": {"maximum": 1}}, "patch": {"vcpu": {"count": 1}}}`)},
		params:   EvaluateParams{Spec: vm()},
		want: Result{Spec: vm("vcpu", map[string]any{"count": 1.0}), Status: StatusModified, Applied: []string{"clamp"},
			Constraints: map[string]any{"vcpu.count": map[string]any{"maximum": 1.0}}},
	}, {
		name:     "PatchMayNotChangeTheServiceType",
		reason:   "the service type decides which policies and providers apply",
		policies: []Policy{pol("st", TypeGlobal, 1, `main := {"patch": {"service_type": "db"}}`)},
		params:   EvaluateParams{Spec: vm()},
		wantErr:  &wantErr{kind: ErrConflict, policy: "st", field: "service_type"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := evaluate(context.Background(), chainOf(t, tc.policies...), newSchemaCache(), tc.params)
			tc.wantErr.check(t, err, tc.reason)
			if tc.wantErr != nil {
				return
			}
			if tc.want.Constraints == nil {
				tc.want.Constraints = map[string]any{}
			}
			if diff := cmp.Diff(tc.want, got, cmpNumbers); diff != "" {
				t.Errorf("%s\nEvaluate: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// cmpNumbers compares JSON numbers by value (constraints keep json.Number).
var cmpNumbers = cmp.FilterValues(func(a, b any) bool {
	_, numA := number(a)
	_, numB := number(b)
	return numA && numB
}, cmp.Comparer(func(a, b any) bool { return equalJSON(a, b) }))
