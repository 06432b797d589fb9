package statemachine

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/invalid"
)

// small is a valid definition the cases change: start → up (promote), a
// redeploy loop on up, and a two-phase delete.
func small() Definition {
	return Definition{
		InitialState: "start",
		States: []State{
			{Name: "start", ModelState: ModelStateCandidate},
			{Name: "up", ModelState: ModelStateActive, ExportResources: true},
			{Name: "deleting", ModelState: ModelStateActive, PurgeResources: true},
			{Name: "terminated", ModelState: ModelStateInactive, Deleted: true},
		},
		Transfers: []Transfer{
			{Source: "start", Target: "up", Trigger: TriggerAuto, TargetOperation: OpPromote},
			{Source: "up", Target: "up", Trigger: TriggerResource},
			{Source: "up", Target: "deleting", Trigger: TriggerOnDelete},
			{Source: "deleting", Target: "terminated", Trigger: TriggerResource},
		},
	}
}

// fieldsOf returns the fields an *invalid.Error names, sorted; nil for nil.
func fieldsOf(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var ie *invalid.Error
	if !errors.As(err, &ie) {
		t.Fatalf("error %v (%T) is not an *invalid.Error", err, err)
	}
	var out []string
	for _, f := range ie.Fields {
		out = append(out, f.Field)
	}
	slices.Sort(out)
	return out
}

func TestDefinition_Validate(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason string
		change func(d *Definition)
		want   []string
	}{
		"Valid": {reason: "The base definition is valid.", change: func(*Definition) {}},
		"DefaultsAreValid": {reason: "An empty label and a resource transfer without error take their defaults.",
			change: func(d *Definition) { d.States[0].Label = ""; d.Transfers[1].Error = "" }},
		"NoStates": {reason: "A lifecycle needs states, and initial_state then names none.",
			change: func(d *Definition) { d.States, d.Transfers = nil, nil },
			want:   []string{"initial_state", "states"}},
		"MissingInitialState": {reason: "initial_state is required.",
			change: func(d *Definition) { d.InitialState = "" }, want: []string{"initial_state"}},
		"UnknownInitialState": {reason: "initial_state must name a state.",
			change: func(d *Definition) { d.InitialState = "begin" }, want: []string{"initial_state"}},
		"BadStateName": {reason: "State names are words the compact form can parse.",
			change: func(d *Definition) {
				d.States = append(d.States, State{Name: "Bad Name", ModelState: ModelStateActive})
			},
			want: []string{"states[4].name"}},
		"DuplicateState": {reason: "State names are unique.",
			change: func(d *Definition) { d.States = append(d.States, State{Name: "up", ModelState: ModelStateActive}) },
			want:   []string{"states[4].name"}},
		"BadEnums": {reason: "Each enum is named by its path.",
			change: func(d *Definition) {
				d.States[0].ModelState = "running"
				d.States[1].Label = "green"
				d.States[2].ValidateSelf = SetRollback
				d.Transfers[0].Trigger = "manual"
				d.Transfers[0].TargetOperation = "promote all"
				d.Transfers[1].ErrorOperation = "clear everything"
			},
			want: []string{"states[0].model_state", "states[1].label", "states[2].validate_self",
				"transfers[0].target_operation", "transfers[0].trigger", "transfers[1].error_operation"}},
		"MissingRequired": {reason: "model_state, source, target and trigger are required.",
			change: func(d *Definition) {
				d.States[1].ModelState = ""
				d.Transfers[2] = Transfer{}
			},
			want: []string{"states[1].model_state", "transfers[2].source", "transfers[2].target", "transfers[2].trigger"}},
		"UnknownStates": {reason: "Sources, targets and error states name states.",
			change: func(d *Definition) {
				d.Transfers[0].Target = "nowhere"
				d.Transfers[2].Source = "elsewhere"
				d.Transfers[3].Error = "limbo"
			},
			want: []string{"transfers[0].target", "transfers[2].source", "transfers[3].error"}},
		"ValidateOnlyOnAutoAndAPI": {reason: "An on_delete transfer cannot validate (and has no error state).",
			change: func(d *Definition) { d.Transfers[2].Validate = true },
			want:   []string{"transfers[2].error", "transfers[2].validate"}},
		"ValidateNeedsError": {reason: "A failed validation must go somewhere.",
			change: func(d *Definition) { d.Transfers[0].Validate = true }, want: []string{"transfers[0].error"}},
		"ErrorOnlyWhereAFailureIs": {reason: "Transfers that cannot fail take no error state or error operation.",
			change: func(d *Definition) {
				d.Transfers[0].Error = "start"
				d.Transfers[2].ErrorOperation = OpClearCandidate
			},
			want: []string{"transfers[0].error", "transfers[2].error_operation"}},
		"ExportAndPurge": {reason: "Export and purge are opposite actions.",
			change: func(d *Definition) { d.States[2].ExportResources = true }, want: []string{"states[2].purge_resources"}},
		"DeletedExports": {reason: "A terminal state does not realise resources.",
			change: func(d *Definition) { d.States[3].ExportResources = true }, want: []string{"states[3].export_resources"}},
		"TwoAutoTransfers": {reason: "An auto trigger could not choose.",
			change: func(d *Definition) {
				d.Transfers = append(d.Transfers, Transfer{Source: "start", Target: "terminated", Trigger: TriggerAuto})
			},
			want: []string{"transfers[4].trigger"}},
		"TwoResourceTransfers": {reason: "One deployment outcome, one transfer.",
			change: func(d *Definition) {
				d.Transfers = append(d.Transfers, Transfer{Source: "up", Target: "deleting", Trigger: TriggerResource})
			},
			want: []string{"transfers[4].trigger"}},
		"TwoAPITransfersToOneTarget": {reason: "setState names source and target: one transfer each.",
			change: func(d *Definition) {
				d.Transfers = append(d.Transfers,
					Transfer{Source: "up", Target: "deleting", Trigger: TriggerAPI},
					Transfer{Source: "up", Target: "terminated", Trigger: TriggerAPI},
					Transfer{Source: "up", Target: "deleting", Trigger: TriggerAPI, TargetOperation: OpClearActive})
			},
			want: []string{"transfers[6].target"}},
		"Unreachable": {reason: "A state no edge leads to is a mistake.",
			change: func(d *Definition) {
				d.States = append(d.States, State{Name: "orphan", ModelState: ModelStateInactive})
				d.Transfers = append(d.Transfers, Transfer{Source: "orphan", Target: "up", Trigger: TriggerAPI})
			},
			want: []string{"states[4]"}},
		"ReachableThroughErrorEdges": {reason: "Error edges reach states too.",
			change: func(d *Definition) {
				d.States = append(d.States, State{Name: "failed", ModelState: ModelStateActive, ExportResources: true})
				d.Transfers[1].Error = "failed"
				d.Transfers = append(d.Transfers, Transfer{Source: "failed", Target: "up", Trigger: TriggerResource})
			}},
		"AutoLoop": {reason: "Auto transfers that come back would run forever.",
			change: func(d *Definition) {
				d.Transfers = append(d.Transfers, Transfer{Source: "up", Target: "start", Trigger: TriggerAuto})
			},
			want: []string{"transfers[4]"}},
		"AutoValidationLoop": {reason: "A validation that keeps failing back into its source loops too.",
			change: func(d *Definition) {
				d.Transfers[0].Validate, d.Transfers[0].Error = true, "start"
			},
			want: []string{"transfers[0]"}},
		"PromoteWithoutCandidate": {reason: "In up the candidate was promoted already: promoting again cannot apply.",
			change: func(d *Definition) {
				d.Transfers = append(d.Transfers, Transfer{Source: "up", Target: "up", Trigger: TriggerAPI, TargetOperation: OpPromote})
			},
			want: []string{"transfers[4].target_operation"}},
		"PromoteAfterUpdate": {reason: "An update brings a candidate set.",
			change: func(d *Definition) {
				d.Transfers = append(d.Transfers, Transfer{Source: "up", Target: "up", Trigger: TriggerOnUpdate, TargetOperation: OpPromote})
			}},
		"RollbackWithoutRollbackSet": {reason: "After one promote there is nothing to roll back to.",
			change: func(d *Definition) {
				d.Transfers = append(d.Transfers, Transfer{Source: "up", Target: "up", Trigger: TriggerAPI, TargetOperation: OpRollback})
			},
			want: []string{"transfers[4].target_operation"}},
		"ErrorOperationChecked": {reason: "The error edge's operation is checked like the target's.",
			change: func(d *Definition) { d.Transfers[1].ErrorOperation = OpPromote },
			want:   []string{"transfers[1].error_operation"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := small()
			tc.change(&d)
			if diff := cmp.Diff(tc.want, fieldsOf(t, d.Validate())); diff != "" {
				t.Errorf("%s\nfields: -want +got:\n%s\nerror: %v", tc.reason, diff, d.Validate())
			}
		})
	}
}

func TestDefinition_ValidateSaysWhy(t *testing.T) {
	t.Parallel()
	d := small()
	d.Transfers = append(d.Transfers, Transfer{Source: "up", Target: "start", Trigger: TriggerAuto},
		Transfer{Source: "up", Target: "up", Trigger: TriggerAPI, TargetOperation: OpRollback})
	var ie *invalid.Error
	if !errors.As(d.Validate(), &ie) {
		t.Fatalf("Validate() = %v, want an *invalid.Error", d.Validate())
	}
	want := []invalid.Field{
		{Field: "transfers[4]", Message: "auto transfers loop forever: start -> up -> start"},
		{Field: "transfers[5].target_operation", Message: `rollback needs a rollback set, and an order in state "up" never has one here`},
	}
	if diff := cmp.Diff(want, ie.Fields); diff != "" {
		t.Errorf("fields: -want +got:\n%s", diff)
	}
}

func TestDefinition_NormalizedFillsDefaults(t *testing.T) {
	t.Parallel()
	d := Definition{InitialState: "a", States: []State{{Name: "a", ModelState: ModelStateActive}},
		Transfers: []Transfer{{Source: "a", Target: "a", Trigger: TriggerResource}}}
	n := d.normalized()
	if n.States[0].Label != LabelInfo || n.Transfers[0].Error != "a" {
		t.Errorf("normalized = %+v; want label info and the resource transfer's error its source", n)
	}
	if d.States[0].Label != "" || d.Transfers[0].Error != "" {
		t.Errorf("normalized changed its receiver: %+v", d)
	}
	if e := (Definition{}).normalized(); e.States == nil || e.Transfers == nil {
		t.Errorf("normalized lists are nil: %+v", e)
	}
}

func TestDefinition_ValidateBoundsTheSize(t *testing.T) {
	t.Parallel()
	d := small()
	for i := range MaxStates {
		d.States = append(d.States, State{Name: fmt.Sprintf("s%d", i), ModelState: ModelStateActive})
	}
	d.Transfers = slices.Repeat(d.Transfers, MaxTransfers/len(d.Transfers)+1)
	if diff := cmp.Diff([]string{"states", "transfers"}, fieldsOf(t, d.Validate())); diff != "" {
		t.Errorf("fields: -want +got:\n%s", diff)
	}
}
