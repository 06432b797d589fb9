package statemachine

import (
	"cmp"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// row is one line of a lifecycle table as research/lsm-peers.md §1.6 writes
// it: from, trigger (+V for validate), success, error, operation.
type row struct {
	from     string
	trigger  Trigger
	validate bool
	to, err  string
	op       Operation
	errOp    Operation
}

func rows(d Definition) []row {
	out := make([]row, len(d.Transfers))
	for i, t := range d.Transfers {
		out[i] = row{t.Source, t.Trigger, t.Validate, t.Target, t.Error, t.TargetOperation, t.ErrorOperation}
	}
	return sortRows(out)
}

func sortRows(rs []row) []row {
	slices.SortFunc(rs, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.trigger, b.trigger), cmp.Compare(a.to, b.to))
	})
	return rs
}

// stateRow is a state's flags: the model state and what the engine does.
type stateRow struct {
	name                   string
	model                  ModelState
	export, purge, deleted bool
	label                  Label
	validateSelf           AttributeSet
}

func stateRows(d Definition) []stateRow {
	out := make([]stateRow, len(d.States))
	for i, s := range d.States {
		out[i] = stateRow{s.Name, s.ModelState, s.ExportResources, s.PurgeResources, s.Deleted, s.Label, s.ValidateSelf}
	}
	return out
}

const (
	auto     = TriggerAuto
	api      = TriggerAPI
	update   = TriggerOnUpdate
	del      = TriggerOnDelete
	resource = TriggerResource
)

// TestBuiltin_SimpleIsTheLSMTable checks simple against §1.6's table, row
// by row (S = api, R = resource, D = on_delete, U = on_update, A+V = auto
// validate), and its states against the flags the table's notes give.
func TestBuiltin_SimpleIsTheLSMTable(t *testing.T) {
	t.Parallel()
	l, ok := builtin(SimpleID)
	if !ok {
		t.Fatal("simple is not built in")
	}
	want := []row{
		{from: "start", trigger: auto, validate: true, to: "acknowledged", err: "rejected"},
		{from: "acknowledged", trigger: auto, to: "creating", op: OpPromote},
		{from: "creating", trigger: resource, to: "up", err: "failed"},
		{from: "creating", trigger: del, to: "deleting"},
		{from: "up", trigger: resource, to: "up", err: "failed"},
		{from: "up", trigger: update, to: "update_start"},
		{from: "up", trigger: del, to: "deleting"},
		{from: "failed", trigger: resource, to: "up", err: "failed"},
		{from: "failed", trigger: del, to: "deleting"},
		{from: "update_start", trigger: auto, validate: true, to: "update_acknowledged", err: "update_rejected"},
		{from: "update_rejected", trigger: api, to: "up", op: OpClearCandidate},
		{from: "update_rejected", trigger: update, to: "update_start"},
		{from: "update_acknowledged", trigger: auto, to: "update_inprogress", op: OpPromote},
		{from: "update_inprogress", trigger: resource, to: "up", err: "update_failed"},
		{from: "update_failed", trigger: resource, to: "up", err: "update_failed"},
		{from: "update_failed", trigger: api, to: "rollback", op: OpRollback},
		{from: "update_failed", trigger: del, to: "deleting"},
		{from: "rollback", trigger: resource, to: "up", err: "failed"},
		{from: "rejected", trigger: update, to: "start"},
		{from: "rejected", trigger: del, to: "terminated"},
		{from: "deleting", trigger: resource, to: "terminated", err: "deleting"},
	}
	if diff := gocmp.Diff(sortRows(want), rows(l.Definition), gocmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("simple's transfers: -want +got:\n%s", diff)
	}
	wantStates := []stateRow{
		{name: "start", model: ModelStateCandidate, label: LabelInfo},
		{name: "acknowledged", model: ModelStateCandidate, label: LabelInfo},
		{name: "creating", model: ModelStateActive, export: true, label: LabelInfo},
		{name: "up", model: ModelStateActive, export: true, label: LabelSuccess},
		{name: "failed", model: ModelStateActive, export: true, label: LabelDanger},
		{name: "rejected", model: ModelStateInactive, deleted: true, label: LabelDanger},
		{name: "update_start", model: ModelStateCandidate, label: LabelInfo},
		{name: "update_rejected", model: ModelStateCandidate, label: LabelWarning},
		{name: "update_acknowledged", model: ModelStateCandidate, label: LabelInfo},
		{name: "update_inprogress", model: ModelStateActive, export: true, label: LabelInfo},
		{name: "update_failed", model: ModelStateActive, export: true, label: LabelDanger},
		{name: "rollback", model: ModelStateActive, export: true, label: LabelWarning},
		{name: "deleting", model: ModelStateActive, purge: true, label: LabelInfo},
		{name: "terminated", model: ModelStateInactive, deleted: true, label: LabelInfo},
	}
	if diff := gocmp.Diff(wantStates, stateRows(l.Definition), gocmp.AllowUnexported(stateRow{})); diff != "" {
		t.Errorf("simple's states: -want +got:\n%s", diff)
	}
	if l.InitialState != "start" || l.Compact == nil {
		t.Errorf("simple: initial %q, compact %s", l.InitialState, l.Compact)
	}
}

// TestBuiltin_ServiceFollowsTheLSMBullets checks service against §1.6's
// bullets, with the choices doc.go states where they are vague.
func TestBuiltin_ServiceFollowsTheLSMBullets(t *testing.T) {
	t.Parallel()
	l, ok := builtin(ServiceID)
	if !ok {
		t.Fatal("service is not built in")
	}
	want := []row{
		// simple's creation path, with the designed gate (auto and api twins).
		{from: "start", trigger: auto, validate: true, to: "acknowledged", err: "rejected"},
		{from: "acknowledged", trigger: api, validate: true, to: "acknowledged", err: "rejected"},
		{from: "acknowledged", trigger: auto, validate: true, to: "designed", err: "rejected"},
		{from: "acknowledged", trigger: api, validate: true, to: "designed", err: "rejected"},
		{from: "designed", trigger: auto, to: "creating", op: OpPromote},
		{from: "designed", trigger: api, to: "creating", op: OpPromote},
		{from: "creating", trigger: resource, to: "up", err: "failed"},
		{from: "up", trigger: resource, to: "up", err: "failed"},
		{from: "failed", trigger: resource, to: "up", err: "failed"},
		// updates from up, and their failed twins from failed.
		{from: "up", trigger: update, to: "update_start"},
		{from: "failed", trigger: update, to: "update_start_failed"},
		{from: "update_start", trigger: auto, validate: true, to: "update_acknowledged", err: "update_rejected"},
		{from: "update_start_failed", trigger: auto, validate: true, to: "update_acknowledged_failed", err: "update_rejected_failed"},
		{from: "update_acknowledged", trigger: api, validate: true, to: "update_acknowledged", err: "update_rejected"},
		{from: "update_acknowledged_failed", trigger: api, validate: true, to: "update_acknowledged_failed", err: "update_rejected_failed"},
		{from: "update_acknowledged", trigger: auto, validate: true, to: "update_designed", err: "update_rejected"},
		{from: "update_acknowledged", trigger: api, validate: true, to: "update_designed", err: "update_rejected"},
		{from: "update_acknowledged_failed", trigger: auto, validate: true, to: "update_designed_failed", err: "update_rejected_failed"},
		{from: "update_acknowledged_failed", trigger: api, validate: true, to: "update_designed_failed", err: "update_rejected_failed"},
		{from: "update_designed", trigger: auto, to: "update_inprogress", op: OpPromote},
		{from: "update_designed", trigger: api, to: "update_inprogress", op: OpPromote},
		{from: "update_designed_failed", trigger: auto, to: "update_inprogress", op: OpPromote},
		{from: "update_designed_failed", trigger: api, to: "update_inprogress", op: OpPromote},
		{from: "update_rejected", trigger: update, to: "update_start"},
		{from: "update_rejected_failed", trigger: update, to: "update_start_failed"},
		// abort edges: back to up, or to failed from the twins.
		{from: "update_acknowledged", trigger: api, to: "up", op: OpClearCandidate},
		{from: "update_designed", trigger: api, to: "up", op: OpClearCandidate},
		{from: "update_rejected", trigger: api, to: "up", op: OpClearCandidate},
		{from: "update_acknowledged_failed", trigger: api, to: "failed", op: OpClearCandidate},
		{from: "update_designed_failed", trigger: api, to: "failed", op: OpClearCandidate},
		{from: "update_rejected_failed", trigger: api, to: "failed", op: OpClearCandidate},
		// deploy outcomes keep the up/failed distinction while an update waits.
		{from: "update_start", trigger: resource, to: "update_start", err: "update_start_failed"},
		{from: "update_start_failed", trigger: resource, to: "update_start", err: "update_start_failed"},
		{from: "update_acknowledged", trigger: resource, to: "update_acknowledged", err: "update_acknowledged_failed"},
		{from: "update_acknowledged_failed", trigger: resource, to: "update_acknowledged", err: "update_acknowledged_failed"},
		{from: "update_designed", trigger: resource, to: "update_designed", err: "update_designed_failed"},
		{from: "update_designed_failed", trigger: resource, to: "update_designed", err: "update_designed_failed"},
		{from: "update_rejected", trigger: resource, to: "update_rejected", err: "update_rejected_failed"},
		{from: "update_rejected_failed", trigger: resource, to: "update_rejected", err: "update_rejected_failed"},
		// simple's deploy, rollback and delete.
		{from: "update_inprogress", trigger: resource, to: "up", err: "update_failed"},
		{from: "update_failed", trigger: resource, to: "up", err: "update_failed"},
		{from: "update_failed", trigger: api, to: "rollback", op: OpRollback},
		{from: "rollback", trigger: resource, to: "up", err: "failed"},
		{from: "rejected", trigger: update, to: "start"},
		{from: "creating", trigger: del, to: "deleting"},
		{from: "up", trigger: del, to: "deleting"},
		{from: "failed", trigger: del, to: "deleting"},
		{from: "update_failed", trigger: del, to: "deleting"},
		{from: "deleting", trigger: resource, to: "terminated", err: "deleting"},
		// direct deletion where nothing is deployed yet.
		{from: "start", trigger: del, to: "terminated"},
		{from: "acknowledged", trigger: del, to: "terminated"},
		{from: "designed", trigger: del, to: "terminated"},
		{from: "rejected", trigger: del, to: "terminated"},
	}
	if diff := gocmp.Diff(sortRows(want), rows(l.Definition), gocmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("service's transfers: -want +got:\n%s", diff)
	}
	var names []string
	for _, s := range l.States {
		names = append(names, s.Name)
	}
	wantNames := []string{"start", "acknowledged", "designed", "creating", "up", "failed", "rejected",
		"update_start", "update_start_failed", "update_acknowledged", "update_acknowledged_failed",
		"update_designed", "update_designed_failed", "update_rejected", "update_rejected_failed",
		"update_inprogress", "update_failed", "rollback", "deleting", "terminated"}
	if diff := gocmp.Diff(wantNames, names); diff != "" {
		t.Errorf("service's states: -want +got:\n%s", diff)
	}
	simple, _ := builtin(SimpleID)
	for _, s := range simple.States {
		if got, _ := l.State(s.Name); got != s {
			t.Errorf("state %s is %+v in service but %+v in simple", s.Name, got, s)
		}
	}
	for _, name := range []string{"designed", "update_designed", "update_designed_failed"} {
		if s, _ := l.State(name); s.ModelState != ModelStateDesigned || s.ExportResources {
			t.Errorf("%s = %+v; want designed, not exporting", name, s)
		}
	}
}

func TestBuiltin_ListedByID(t *testing.T) {
	t.Parallel()
	var ids []string
	for _, l := range Builtins() {
		ids = append(ids, l.ID)
		if err := l.Validate(); err != nil {
			t.Errorf("built-in %s: %v", l.ID, err)
		}
	}
	if !slices.Equal(ids, []string{"service", "simple"}) {
		t.Errorf("built-ins %v, want service, simple", ids)
	}
}

// builtin returns the built-in with the id.
func builtin(id string) (Builtin, bool) {
	for _, l := range Builtins() {
		if l.ID == id {
			return l, true
		}
	}
	return Builtin{}, false
}
