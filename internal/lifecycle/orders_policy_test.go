package lifecycle_test

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// policyBody is a GLOBAL policy whose main is the given Rego object.
func policyBody(name string, priority int, main string) map[string]any {
	return map[string]any{"display_name": name, "policy_type": "GLOBAL", "priority": priority,
		"rego_code": "package steward." + name + "\n\nmain := " + main + "\n"}
}

// Two policies' enums for one field overlap: an order in the intersection
// is placed, one outside it is refused by the policy that excludes it, as
// DCM does (issue 22, item 10).
func TestOrders_EnumConstraintsIntersect(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		e.s.Do(t, "POST", "/api/v1/policies?id=one-to-three", policyBody("one_to_three", 1,
			`{"constraints": {"vcpu.count": {"enum": [1, 2, 3]}}}`)).Want(t, http.StatusCreated)
		e.s.Do(t, "POST", "/api/v1/policies?id=two-to-four", policyBody("two_to_four", 2,
			`{"constraints": {"vcpu.count": {"enum": [2, 3, 4]}}}`)).Want(t, http.StatusCreated)

		if o := e.create(t, "in-both", 3); o.InstanceID == "" {
			t.Errorf("an order in the intersection was not placed: %+v", o)
		}
		p := e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=only-first", map[string]any{
			"catalog_item_id": "small-vm", "user_values": []any{map[string]any{"path": "vcpu.count", "value": 1}},
		}).WantProblem(t, http.StatusNotAcceptable, "POLICY_REJECTED")
		if p.Extra["policy_id"] != "two-to-four" {
			t.Errorf("vcpu.count 1 outside the intersection: %+v, want a rejection by two-to-four", p)
		}
	})
}

// memorySize is an attribute set's memory.size.
func memorySize(attrs map[string]any) any {
	m, _ := attrs["memory"].(map[string]any)
	return m["size"]
}

// policyShown is an order with the attribute sets and user values this
// file looks at.
type policyShown struct {
	order
	UserValues []map[string]any `json:"user_values"`
	Sets       struct {
		Active    map[string]any `json:"active"`
		Requested map[string]any `json:"requested"`
	} `json:"attributes"`
}

func (e *orders) getShown(t *testing.T, id string) policyShown {
	t.Helper()
	var o policyShown
	e.s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id, nil).Want(t, http.StatusOK).JSON(t, &o)
	return o
}

// A patch policy's value is what the provider runs, so it is what the
// order's active set shows; the set as asked stays beside it as requested.
// An update in place and a rehydration run the chain afresh on the set as
// asked and show what it made of it (issue 22, item 11).
func TestOrders_ActiveSetIsWhatRuns(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, true)
		memory := func(size string) map[string]any {
			return policyBody("memory", 1, `{"patch": {"memory": {"size": "`+size+`"}}}`)
		}
		e.s.Do(t, "POST", "/api/v1/policies?id=memory", memory("8GB")).Want(t, http.StatusCreated)
		o := e.up(t, "patched", 2)
		if got := memorySize(e.p.WaitForCall(t, providertest.MethodCreate, o.InstanceID).Spec); got != "8GB" {
			t.Fatalf("the provider got memory.size %v, want the patched 8GB", got)
		}
		shown := e.getShown(t, "patched")
		if memorySize(shown.Sets.Active) != "8GB" || memorySize(shown.Sets.Requested) != "2GB" {
			t.Errorf("attributes = active %v, requested %v; want active 8GB (what runs), requested 2GB (as asked)",
				shown.Sets.Active, shown.Sets.Requested)
		}

		// An update in place sends the patched set with the new value.
		e.patch(t, "patched", map[string]any{"user_values": []any{map[string]any{"path": "vcpu.count", "value": 3}}})
		call := e.p.WaitForCall(t, providertest.MethodUpdate, o.InstanceID)
		if memorySize(call.Spec) != "8GB" || vcpu(call.Spec) != 3.0 {
			t.Errorf("the update sent %v, want memory.size 8GB and vcpu.count 3", call.Spec)
		}
		e.report(t, o.InstanceID, "RUNNING")
		poll.Until(t, "the update runs", func() bool {
			shown = e.getShown(t, "patched")
			return shown.State == "up" && vcpu(shown.Sets.Active) == 3.0
		})
		if memorySize(shown.Sets.Active) != "8GB" || memorySize(shown.Sets.Requested) != "2GB" || vcpu(shown.Sets.Requested) != 3.0 {
			t.Errorf("after the update: active %v, requested %v", shown.Sets.Active, shown.Sets.Requested)
		}

		// A rehydration runs the chain again on the set as asked.
		e.s.Do(t, "PATCH", "/api/v1/policies/memory", map[string]any{"rego_code": memory("16GB")["rego_code"]}).
			Want(t, http.StatusOK)
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances/patched:rehydrate", nil).Want(t, http.StatusAccepted)
		fresh := e.newCreate(t, o.InstanceID)
		if got := memorySize(e.p.WaitForCall(t, providertest.MethodCreate, fresh).Spec); got != "16GB" {
			t.Errorf("the rehydrated resource got memory.size %v, want 16GB", got)
		}
		e.report(t, fresh, "RUNNING")
		poll.Until(t, "the order shows its rehydrated resource", func() bool {
			shown = e.getShown(t, "patched")
			return shown.InstanceID == fresh && shown.Status == "RUNNING"
		})
		if memorySize(shown.Sets.Active) != "16GB" || memorySize(shown.Sets.Requested) != "2GB" {
			t.Errorf("after the rehydration: active %v, requested %v; want 16GB as run, 2GB as asked",
				shown.Sets.Active, shown.Sets.Requested)
		}
	})
}

// An update a policy rejects, then aborted: the user values are again the
// ones the running set was asked with, an earlier value included (issue 22,
// item 11).
func TestOrders_AbortedUpdateRestoresUserValues(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		e.s.Do(t, "POST", "/api/v1/catalog-items?id=tunable-vm", map[string]any{
			"service_type": "vm",
			"defaults":     map[string]any{"memory": map[string]any{"size": "2GB"}, "guest_os": map[string]any{"type": "fedora-39"}},
			"fields": []any{
				map[string]any{"path": "vcpu.count", "editable": true, "default": 1},
				map[string]any{"path": "memory.size", "editable": true},
			},
		}).Want(t, http.StatusCreated)
		e.s.Do(t, "POST", "/api/v1/policies?id=small", policyBody("small", 5,
			`{"rejected": true, "rejection_reason": "at most 3 vCPUs"} if {
	input.spec.vcpu.count > 3
} else := {}`)).Want(t, http.StatusCreated)
		asked := []any{map[string]any{"path": "memory.size", "value": "4GB"}, map[string]any{"path": "vcpu.count", "value": 2}}
		var o order
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=tuned", map[string]any{
			"catalog_item_id": "tunable-vm", "user_values": asked,
		}).Want(t, http.StatusCreated).JSON(t, &o)
		e.p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
		e.report(t, o.InstanceID, "RUNNING")
		e.waitState(t, "tuned", "up")
		before := e.getShown(t, "tuned").UserValues

		e.patch(t, "tuned", map[string]any{"user_values": []any{map[string]any{"path": "vcpu.count", "value": 4}}})
		rejected := e.waitState(t, "tuned", "update_rejected")
		if shown := e.getShown(t, "tuned"); len(shown.UserValues) != 1 {
			t.Errorf("while the update is pending, user_values = %v, want the update's", shown.UserValues)
		}
		e.setState(t, "tuned", "up", rejected.Version).Want(t, http.StatusOK)
		after := e.getShown(t, "tuned")
		if after.State != "up" || !reflect.DeepEqual(after.UserValues, before) || vcpu(after.Sets.Active) != 2.0 ||
			memorySize(after.Sets.Active) != "4GB" {
			t.Errorf("after the abort: state %s, user_values %v (before the update %v), active %v",
				after.State, after.UserValues, before, after.Sets.Active)
		}
	})
}
