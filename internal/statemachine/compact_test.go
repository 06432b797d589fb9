package statemachine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/invalid"
)

// approval is a valid compact lifecycle with an approval gate (the brief's
// example, completed so that every state is defined and reachable).
const approval = `{
  "initial_state": "start",
  "states": {"start": "candidate", "designed": "designed", "creating": "active export",
             "up": "active export success", "failed": "active export danger",
             "rejected": "inactive deleted danger", "update_start": "candidate validate_self=candidate",
             "update_rejected": "candidate warning abort=up",
             "deleting": "active purge", "terminated": "inactive deleted"},
  "transfers": ["start -> designed: auto validate | rejected",
                "designed -> creating: api promote  # approve",
                "designed -> rejected: api",
                "creating, up, failed -> up: resource | failed",
                "up -> update_start: on_update",
                "update_start -> creating: auto validate promote | update_rejected clear-candidate",
                "update_rejected -> update_start: on_update",
                "deleting -> terminated: resource"],
  "on_delete": "deleting"
}`

func TestCompact_ExpandsInOrder(t *testing.T) {
	t.Parallel()
	got, compact, err := Source{Compact: json.RawMessage(approval)}.Expand()
	if err != nil {
		t.Fatalf("expand: %v", err)
	}
	st := func(name string, m ModelState, label Label) State {
		return State{Name: name, ModelState: m, Label: label}
	}
	exp := func(s State) State { s.ExportResources = true; return s }
	want := Definition{
		InitialState: "start",
		States: []State{
			st("start", ModelStateCandidate, LabelInfo), st("designed", ModelStateDesigned, LabelInfo),
			exp(st("creating", ModelStateActive, LabelInfo)), exp(st("up", ModelStateActive, LabelSuccess)),
			exp(st("failed", ModelStateActive, LabelDanger)),
			{Name: "rejected", ModelState: ModelStateInactive, Deleted: true, Label: LabelDanger},
			{Name: "update_start", ModelState: ModelStateCandidate, ValidateSelf: SetCandidate, Label: LabelInfo},
			st("update_rejected", ModelStateCandidate, LabelWarning),
			{Name: "deleting", ModelState: ModelStateActive, PurgeResources: true, Label: LabelInfo},
			{Name: "terminated", ModelState: ModelStateInactive, Deleted: true, Label: LabelInfo},
		},
		Transfers: []Transfer{
			{Source: "start", Target: "designed", Trigger: TriggerAuto, Validate: true, Error: "rejected"},
			{Source: "designed", Target: "creating", Trigger: TriggerAPI, TargetOperation: OpPromote, Description: "approve"},
			{Source: "designed", Target: "rejected", Trigger: TriggerAPI},
			{Source: "creating", Target: "up", Trigger: TriggerResource, Error: "failed"},
			{Source: "up", Target: "up", Trigger: TriggerResource, Error: "failed"},
			{Source: "failed", Target: "up", Trigger: TriggerResource, Error: "failed"},
			{Source: "up", Target: "update_start", Trigger: TriggerOnUpdate},
			{Source: "update_start", Target: "creating", Trigger: TriggerAuto, Validate: true, TargetOperation: OpPromote,
				Error: "update_rejected", ErrorOperation: OpClearCandidate},
			{Source: "update_rejected", Target: "update_start", Trigger: TriggerOnUpdate},
			{Source: "deleting", Target: "terminated", Trigger: TriggerResource, Error: "deleting"},
			// abort=up
			{Source: "update_rejected", Target: "up", Trigger: TriggerAPI, TargetOperation: OpClearCandidate,
				Description: "abort: drop the candidate attributes"},
			// on_delete: every state neither deleted nor purging nor with one.
			{Source: "start", Target: "deleting", Trigger: TriggerOnDelete},
			{Source: "designed", Target: "deleting", Trigger: TriggerOnDelete},
			{Source: "creating", Target: "deleting", Trigger: TriggerOnDelete},
			{Source: "up", Target: "deleting", Trigger: TriggerOnDelete},
			{Source: "failed", Target: "deleting", Trigger: TriggerOnDelete},
			{Source: "update_start", Target: "deleting", Trigger: TriggerOnDelete},
			{Source: "update_rejected", Target: "deleting", Trigger: TriggerOnDelete},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("expansion: -want +got:\n%s", diff)
	}
	var sent, stored any
	_ = json.Unmarshal([]byte(approval), &sent)
	if err := json.Unmarshal(compact, &stored); err != nil || !cmp.Equal(sent, stored) || strings.Contains(string(compact), "\n") {
		t.Errorf("stored compact %s, err %v; want the source, compacted", compact, err)
	}
}

func TestCompact_StarAndOnDelete(t *testing.T) {
	t.Parallel()
	src := `{"initial_state": "a",
	  "states": {"a": "candidate", "b": "active export", "c": "active export", "gone": "inactive deleted",
	             "purging": "active purge"},
	  "transfers": ["a -> b: auto promote", "* -> c: api", "b -> gone: on_delete", "purging -> gone: resource"],
	  "on_delete": "purging"}`
	got, _, err := Source{Compact: json.RawMessage(src)}.Expand()
	if err != nil {
		t.Fatalf("expand: %v", err)
	}
	type edge struct {
		Source, Target string
		Trigger        Trigger
	}
	var edges []edge
	for _, tr := range got.Transfers {
		edges = append(edges, edge{tr.Source, tr.Target, tr.Trigger})
	}
	want := []edge{
		{"a", "b", TriggerAuto},
		// *: every state not deleted and not the target, purging included.
		{"a", "c", TriggerAPI}, {"b", "c", TriggerAPI}, {"purging", "c", TriggerAPI},
		{"b", "gone", TriggerOnDelete},
		{"purging", "gone", TriggerResource},
		// on_delete: not b (has one), not gone (deleted), not purging (purges).
		{"a", "purging", TriggerOnDelete}, {"c", "purging", TriggerOnDelete},
	}
	if diff := cmp.Diff(want, edges); diff != "" {
		t.Errorf("edges: -want +got:\n%s", diff)
	}
}

func TestCompact_SyntaxErrorsSayWhatWasExpected(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason  string
		compact string
		field   string
		message string // a part of the message
	}{
		"NotAnObject": {reason: "compact is an object.", compact: `["a"]`, field: "compact", message: "must be an object"},
		"NoInitialState": {reason: "initial_state is required.",
			compact: `{"states": {"a": "active"}}`, field: "compact.initial_state", message: "is required"},
		"NoStates": {reason: "states is required.",
			compact: `{"initial_state": "a", "states": {}}`, field: "compact.states", message: "is required"},
		"StatesNotAnObject": {reason: "states is an object.",
			compact: `{"initial_state": "a", "states": ["a"]}`, field: "compact.states", message: "an object of state name"},
		"StateNotAString": {reason: "A state spec is a string.",
			compact: `{"initial_state": "a", "states": {"a": 1}}`, field: "compact.states.a", message: "must be a string"},
		"StateTwice": {reason: "A name given twice is a mistake Go's maps would hide.",
			compact: `{"initial_state": "a", "states": {"a": "active", "a": "candidate"}}`, field: "compact.states.a",
			message: "is given twice"},
		"NoModelState": {reason: "A state needs its model state.",
			compact: `{"initial_state": "a", "states": {"a": "export"}}`, field: "compact.states.a",
			message: "has no model state: expected a model state (inactive, candidate, designed or active)"},
		"TwoModelStates": {reason: "One model state.",
			compact: `{"initial_state": "a", "states": {"a": "active candidate"}}`, field: "compact.states.a",
			message: "has two model states, active and candidate"},
		"UnknownWord": {reason: "Unknown words are named.",
			compact: `{"initial_state": "a", "states": {"a": "active exprt"}}`, field: "compact.states.a",
			message: `unknown word "exprt": expected`},
		"BadValidateSelf": {reason: "validate_self takes candidate or active.",
			compact: `{"initial_state": "a", "states": {"a": "active validate_self=rollback"}}`, field: "compact.states.a",
			message: "expected validate_self=candidate or validate_self=active"},
		"WordTwice": {reason: "A flag given twice is a typo.",
			compact: `{"initial_state": "a", "states": {"a": "active export export"}}`, field: "compact.states.a",
			message: `"export" is given twice`},
		"TransfersNotAnArray": {reason: "transfers is a list of lines.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "transfers": "a -> a: api"}`,
			field:   "compact.transfers", message: "must be an array of lines"},
		"NoArrow": {reason: "A line has an arrow.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "transfers": ["a to a: api"]}`,
			field:   "compact.transfers[0]", message: `no "->": expected "<source>`},
		"NoColon": {reason: "The trigger follows a colon.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "transfers": ["a -> a api"]}`,
			field:   "compact.transfers[0]", message: `no ":" after the target`},
		"TwoTargets": {reason: "One target.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "transfers": ["a -> a, b: api"]}`,
			field:   "compact.transfers[0]", message: "expected one target state"},
		"EmptySource": {reason: "Sources are names.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "transfers": ["a, -> a: api"]}`,
			field:   "compact.transfers[0]", message: `expected source states separated by ","`},
		"StarWithOthers": {reason: "* means all.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "transfers": ["*, a -> a: api"]}`,
			field:   "compact.transfers[0]", message: `"*" stands for every state`},
		"NoTrigger": {reason: "A trigger is required.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "transfers": ["a -> a:"]}`,
			field:   "compact.transfers[0]", message: "expected a trigger after"},
		"UnknownTrigger": {reason: "Triggers are named.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "transfers": ["a -> a: manual"]}`,
			field:   "compact.transfers[0]", message: `unknown trigger "manual": expected auto, api, on_update, on_delete or resource`},
		"OperationBeforeValidate": {reason: "validate comes before the operation.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "transfers": ["a -> a: api promote validate | a"]}`,
			field:   "compact.transfers[0]", message: `unexpected "validate" after the trigger: expected [validate] [<operation>]`},
		"SpacedOperation": {reason: "Operations are written with a hyphen.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "transfers": ["a -> a: api clear candidate"]}`,
			field:   "compact.transfers[0]", message: `unexpected "clear" after the trigger`},
		"NoErrorState": {reason: "| is followed by the error state.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "transfers": ["a -> a: auto validate |"]}`,
			field:   "compact.transfers[0]", message: `expected an error state after "|"`},
		"BadErrorOperation": {reason: "After the error state, at most one operation.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "transfers": ["a -> a: auto validate | a promote now"]}`,
			field:   "compact.transfers[0]", message: `unexpected "promote now" after the error state`},
		"LineNotAString": {reason: "A line is a string.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "transfers": [{"source": "a"}]}`,
			field:   "compact.transfers[0]", message: "must be a string"},
		"OnDeleteUnknown": {reason: "on_delete names a state.",
			compact: `{"initial_state": "a", "states": {"a": "active"}, "on_delete": "deleting"}`,
			field:   "compact.on_delete", message: `state "deleting" is not defined in compact.states`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, _, err := Source{Compact: json.RawMessage(tc.compact)}.Expand()
			var ie *invalid.Error
			if !errors.As(err, &ie) || len(ie.Fields) != 1 {
				t.Fatalf("%s\nerror = %v; want one invalid field", tc.reason, err)
			}
			if f := ie.Fields[0]; f.Field != tc.field || !strings.Contains(f.Message, tc.message) {
				t.Errorf("%s\ngot %s: %q\nwant %s: ...%q...", tc.reason, f.Field, f.Message, tc.field, tc.message)
			}
		})
	}
}

func TestCompact_ExpansionErrorsNameTheCompactSource(t *testing.T) {
	t.Parallel()
	// The brief's example as written: update_start is never defined, so
	// update_rejected is never reached, and neither is terminated.
	brief := `{"initial_state": "start",
	  "states": {"start": "candidate", "creating": "active export", "up": "active export success",
	             "failed": "active export danger", "rejected": "inactive deleted danger",
	             "update_rejected": "candidate warning abort=up",
	             "deleting": "active purge", "terminated": "inactive deleted"},
	  "transfers": ["start -> creating: auto validate promote | rejected",
	                "creating, failed -> up: resource | failed",
	                "up -> update_start: on_update"],
	  "on_delete": "deleting"}`
	_, _, err := Source{Compact: json.RawMessage(brief)}.Expand()
	want := []invalid.Field{{Field: "compact.transfers[2]", Message: `target: state "update_start" is not defined in states`}}
	var ie *invalid.Error
	if !errors.As(err, &ie) {
		t.Fatalf("error = %v, want an *invalid.Error", err)
	}
	if diff := cmp.Diff(want, ie.Fields); diff != "" {
		t.Errorf("unknown state: -want +got:\n%s", diff)
	}

	fixed := strings.Replace(brief, `"up -> update_start: on_update"`, `"up -> update_rejected: on_update"`, 1)
	_, _, err = Source{Compact: json.RawMessage(fixed)}.Expand()
	want = []invalid.Field{{Field: "compact.states.terminated",
		Message: `state "terminated" is not reachable from initial_state "start"`}}
	if !errors.As(err, &ie) {
		t.Fatalf("error = %v, want an *invalid.Error", err)
	}
	if diff := cmp.Diff(want, ie.Fields); diff != "" {
		t.Errorf("unreachable: -want +got:\n%s", diff)
	}

	// Rules on the expansion name the entry that made the faulty transfer,
	// once however many transfers it made.
	bad := `{"initial_state": "a", "states": {"a": "candidate", "b": "active export abort=a", "c": "Active"},
	  "transfers": ["a, b -> b: on_update promote", "a -> b: on_delete validate", "b -> a: api promote"],
	  "on_delete": "a"}`
	_, _, err = Source{Compact: json.RawMessage(bad)}.Expand()
	want = []invalid.Field{
		{Field: "compact.states.c", Message: `unknown word "Active": expected a model state (inactive, candidate, ` +
			`designed or active), export, purge, deleted, validate_self=candidate|active, a label (info, success, ` +
			`warning or danger) or abort=<state>`},
	}
	if !errors.As(err, &ie) {
		t.Fatalf("error = %v, want an *invalid.Error", err)
	}
	if diff := cmp.Diff(want, ie.Fields); diff != "" {
		t.Errorf("syntax first: -want +got:\n%s", diff)
	}
	bad = strings.Replace(bad, `"Active"`, `"active"`, 1)
	bad = strings.Replace(bad, `"on_delete": "a"`, `"on_delete": "c"`, 1)
	_, _, err = Source{Compact: json.RawMessage(bad)}.Expand()
	want = []invalid.Field{
		{Field: "compact.transfers[1]", Message: "validate: only auto and api transfers can validate, not on_delete"},
		{Field: "compact.transfers[1]", Message: "error: is required on a validating transfer: where a failed validation goes"},
	}
	if !errors.As(err, &ie) {
		t.Fatalf("error = %v, want an *invalid.Error", err)
	}
	if diff := cmp.Diff(want, ie.Fields); diff != "" {
		t.Errorf("structure: -want +got:\n%s", diff)
	}
	bad = strings.Replace(bad, `"a -> b: on_delete validate"`, `"a -> b: api validate | a"`, 1)
	_, _, err = Source{Compact: json.RawMessage(bad)}.Expand()
	want = []invalid.Field{
		{Field: "compact.states.b", Message: `target: state "b" already has an api transfer to "a" (compact.transfers[2])`},
	}
	if !errors.As(err, &ie) {
		t.Fatalf("error = %v, want an *invalid.Error", err)
	}
	if diff := cmp.Diff(want, ie.Fields); diff != "" {
		t.Errorf("duplicates: -want +got:\n%s", diff)
	}
}

func TestCompact_FullMembersMustAgree(t *testing.T) {
	t.Parallel()
	d, compact, err := Source{Compact: json.RawMessage(approval)}.Expand()
	if err != nil {
		t.Fatal(err)
	}
	// What a GET answers can be sent back.
	if _, _, err := (Source{Definition: d, Compact: compact}).Expand(); err != nil {
		t.Errorf("the expansion beside its compact form: %v", err)
	}
	changed := d
	changed.InitialState = "designed"
	_, _, err = Source{Definition: changed, Compact: compact}.Expand()
	if got := fieldsOf(t, err); !cmp.Equal(got, []string{"compact"}) {
		t.Errorf("a different initial_state beside compact: fields %v, want compact", got)
	}
	// null compact means the full form.
	full, stored, err := Source{Definition: d, Compact: json.RawMessage("null")}.Expand()
	if err != nil || stored != nil || !cmp.Equal(full, d) {
		t.Errorf("compact null: %v, stored %s; want the full form alone", err, stored)
	}
}

func TestCompact_ExpansionIsBounded(t *testing.T) {
	t.Parallel()
	states := map[string]string{"a": "candidate"}
	for i := range 200 {
		states[fmt.Sprintf("s%d", i)] = "active"
	}
	lines := make([]string, 60)
	for i := range lines {
		lines[i] = "* -> a: api"
	}
	raw, _ := json.Marshal(map[string]any{"initial_state": "a", "states": states, "transfers": lines})
	_, _, err := Source{Compact: raw}.Expand()
	var ie *invalid.Error
	// 200 sources a line: line 50 is the one that would pass 10000.
	if !errors.As(err, &ie) || len(ie.Fields) != 1 || ie.Fields[0].Field != "compact.transfers[50]" {
		t.Errorf("error = %v; want compact.transfers[50] naming the limit", err)
	}
}
