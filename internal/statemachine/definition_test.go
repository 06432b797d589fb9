package statemachine

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefinition_Lookups(t *testing.T) {
	t.Parallel()
	l, ok := builtin(SimpleID)
	if !ok {
		t.Fatal("simple is not built in")
	}
	if s, ok := l.State("deleting"); !ok || !s.PurgeResources || s.ExportResources {
		t.Errorf("State(deleting) = %+v, %v; want the purging state", s, ok)
	}
	if _, ok := l.State("nope"); ok {
		t.Error("State(nope) found a state")
	}
	cases := []struct {
		source  string
		trigger Trigger
		target  string // "" when none
	}{
		{"start", TriggerAuto, "acknowledged"},
		{"up", TriggerOnUpdate, "update_start"},
		{"up", TriggerOnDelete, "deleting"},
		{"up", TriggerResource, "up"},
		{"up", TriggerAuto, ""},
		{"start", TriggerOnDelete, ""},
		{"update_failed", TriggerAPI, ""}, // api transfers are found by target
	}
	for _, tc := range cases {
		tr, ok := l.Transfer(tc.source, tc.trigger)
		if ok != (tc.target != "") || tr.Target != tc.target {
			t.Errorf("Transfer(%s, %s) = %+v, %v; want target %q", tc.source, tc.trigger, tr, ok, tc.target)
		}
	}
	if tr, ok := l.APITransfer("update_failed", "rollback"); !ok || tr.TargetOperation != OpRollback {
		t.Errorf("APITransfer(update_failed, rollback) = %+v, %v", tr, ok)
	}
	if tr, ok := l.APITransfer("update_rejected", "up"); !ok || tr.TargetOperation != OpClearCandidate {
		t.Errorf("APITransfer(update_rejected, up) = %+v, %v; want the abort edge", tr, ok)
	}
	if _, ok := l.APITransfer("up", "deleting"); ok {
		t.Error("APITransfer(up, deleting) found the on_delete transfer")
	}
}

func TestDefinition_JSONWritesNulls(t *testing.T) {
	t.Parallel()
	d := Definition{InitialState: "a",
		States:    []State{{Name: "a", ModelState: ModelStateCandidate, Label: LabelInfo}},
		Transfers: []Transfer{{Source: "a", Target: "a", Trigger: TriggerAPI}}}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"initial_state":"a","states":[{"name":"a","model_state":"candidate","export_resources":false,` +
		`"purge_resources":false,"deleted":false,"validate_self":null,"label":"info"}],"transfers":[{"source":"a",` +
		`"target":"a","trigger":"api","validate":false,"target_operation":null,"error_operation":null,` +
		`"description":"","error":null}]}`
	if string(b) != want {
		t.Errorf("JSON:\n got %s\nwant %s", b, want)
	}
	var back Definition
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, back); diff != "" {
		t.Errorf("round trip: -want +got:\n%s", diff)
	}
}
