package lifecycle_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestLifecycle_CreateInFullOrCompactThenGetAndList(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)

		var full view
		r := s.Do(t, "POST", "/api/v1/lifecycles?id=mini", mini()).Want(t, http.StatusCreated)
		r.JSON(t, &full)
		if loc := r.Header.Get("Location"); loc != "/api/v1/lifecycles/mini" {
			t.Errorf("Location = %q", loc)
		}
		if r.Header.Get("ETag") != `"1"` || full.ETag != `"1"` {
			t.Errorf("ETag header %q, body %q; want both \"1\"", r.Header.Get("ETag"), full.ETag)
		}
		if full.ID != "mini" || full.Path != "lifecycles/mini" || full.Builtin || hasCompact(full) ||
			full.CreateTime.IsZero() || !full.CreateTime.Equal(full.UpdateTime) {
			t.Errorf("created %+v", full)
		}
		if st, _ := full.State("start"); st.Label != statemachine.LabelInfo {
			t.Errorf("start's label = %q, want the default info", st.Label)
		}
		if tr, _ := full.Transfer("deleting", statemachine.TriggerResource); tr.Error != "deleting" {
			t.Errorf("deleting's resource transfer errs to %q, want its source (retry)", tr.Error)
		}
		var got view
		s.Do(t, "GET", "/api/v1/lifecycles/mini", nil).Want(t, http.StatusOK).JSON(t, &got)
		if diff := cmp.Diff(full, got); diff != "" {
			t.Errorf("GET differs from the create's answer: -create +get:\n%s", diff)
		}

		var compact view
		body := approval()
		body["id"] = "approval" // the body's id serves when ?id= is absent
		r = s.Do(t, "POST", "/api/v1/lifecycles", body).Want(t, http.StatusCreated)
		r.JSON(t, &compact)
		if compact.ID != "approval" || len(compact.States) != 10 || len(compact.Transfers) != 18 {
			t.Errorf("compact create: id %q, %d states, %d transfers; want approval, 10, 18",
				compact.ID, len(compact.States), len(compact.Transfers))
		}
		if tr, ok := compact.APITransfer("designed", "creating"); !ok || tr.TargetOperation != statemachine.OpPromote ||
			tr.Description != "approve" {
			t.Errorf("designed -> creating = %+v, %v", tr, ok)
		}
		s.Do(t, "GET", "/api/v1/lifecycles/approval", nil).Want(t, http.StatusOK).JSON(t, &got)
		if !sameJSON(t, got.Compact, []byte(approvalCompact)) {
			t.Errorf("GET compact = %s, want the source as sent", got.Compact)
		}
		if order := regexp.MustCompile(`"(start|designed|creating|up|terminated)":"`).FindAllString(string(got.Compact), -1); !slices.Equal(order,
			[]string{`"start":"`, `"designed":"`, `"creating":"`, `"up":"`, `"terminated":"`}) {
			t.Errorf("compact.states lost the author's order: %s", got.Compact)
		}

		var generated view
		s.Do(t, "POST", "/api/v1/lifecycles", mini()).Want(t, http.StatusCreated).JSON(t, &generated)
		if !uuidPattern.MatchString(generated.ID) {
			t.Errorf("lifecycle without id got id %q, want a UUID", generated.ID)
		}

		s.Do(t, "POST", "/api/v1/lifecycles?id=mini", mini()).WantProblem(t, http.StatusConflict, "LIFECYCLE_EXISTS")
		s.Do(t, "POST", "/api/v1/lifecycles?id=simple", mini()).WantProblem(t, http.StatusConflict, "LIFECYCLE_EXISTS")
		p := s.Do(t, "POST", "/api/v1/lifecycles?id=Bad_Id", mini()).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if diff := cmp.Diff([]string{"id"}, fields(p)); diff != "" {
			t.Errorf("bad ?id=: fields -want +got:\n%s", diff)
		}
		body = mini()
		body["id"] = "other"
		p = s.Do(t, "POST", "/api/v1/lifecycles?id=mine", body).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if diff := cmp.Diff([]string{"id"}, fields(p)); diff != "" {
			t.Errorf("?id= and body id differ: fields -want +got:\n%s", diff)
		}
		s.Do(t, "GET", "/api/v1/lifecycles/nope", nil).WantProblem(t, http.StatusNotFound, "LIFECYCLE_NOT_FOUND")

		// Stored ids on either side of the built-ins' show that they are
		// merged in; "s-b" sorts bytewise before "sa" on both engines.
		for _, id := range []string{"s-b", "sa", "sf", "zz"} {
			s.Do(t, "POST", "/api/v1/lifecycles?id="+id, mini()).Want(t, http.StatusCreated)
		}
		want := []string{"approval", generated.ID, "mini", "s-b", "sa", "service", "sf", "simple", "zz"}
		slices.Sort(want)
		for _, n := range []int{1, 2, 50} {
			if diff := cmp.Diff(want, ids(listAll(t, s, n))); diff != "" {
				t.Errorf("list in pages of %d: ids -want +got:\n%s", n, diff)
			}
		}
		var first page
		s.Do(t, "GET", "/api/v1/lifecycles", nil).Want(t, http.StatusOK).JSON(t, &first)
		for _, v := range first.Results {
			if v.Path != "lifecycles/"+v.ID || v.ETag == "" || v.Builtin != (v.ID == "simple" || v.ID == "service") {
				t.Errorf("listed %s: path %q, etag %q, builtin %v", v.ID, v.Path, v.ETag, v.Builtin)
			}
		}
		if first.NextPageToken != "" || len(first.Results) != len(want) {
			t.Errorf("one page of %d results has a next token %q", len(first.Results), first.NextPageToken)
		}
		s.Do(t, "GET", "/api/v1/lifecycles?page_token=nope", nil).WantProblem(t, http.StatusBadRequest, "INVALID_PAGE_TOKEN")
		s.Do(t, "GET", "/api/v1/lifecycles?max_page_size=-1", nil).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
	})
}

func TestLifecycle_RefusesBadDefinitionsNamingFields(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		withCompact := mini()
		withCompact["compact"] = json.RawMessage(approvalCompact)
		cases := map[string]struct {
			reason string
			body   any
			want   []string
		}{
			"Empty": {reason: "A definition needs its initial state and states.",
				body: map[string]any{}, want: []string{"initial_state", "states"}},
			"BadStates": {reason: "Each bad field is named by its JSON path.", body: `{"initial_state": "start",
				"states": [{"name": "start", "model_state": "candidate"}, {"name": "up", "model_state": "running"},
				           {"name": "start", "model_state": "active", "label": "green"}],
				"transfers": [{"source": "start", "target": "upp", "trigger": "auto"},
				              {"source": "start", "target": "up", "trigger": "api", "validate": true}]}`,
				want: []string{"states[1].model_state", "states[2].label", "states[2].name", "transfers[0].target",
					"transfers[1].error"}},
			"Unreachable": {reason: "States nothing leads to are named.", body: `{"initial_state": "a",
				"states": [{"name": "a", "model_state": "active"}, {"name": "b", "model_state": "active"},
				           {"name": "c", "model_state": "active"}],
				"transfers": [{"source": "b", "target": "c", "trigger": "api"}]}`,
				want: []string{"states[1]", "states[2]"}},
			"Duplicates": {reason: "A trigger with two transfers to choose from is refused.", body: `{"initial_state": "a",
				"states": [{"name": "a", "model_state": "candidate"}, {"name": "b", "model_state": "active"}],
				"transfers": [{"source": "a", "target": "b", "trigger": "on_update"},
				              {"source": "a", "target": "a", "trigger": "on_update"},
				              {"source": "a", "target": "b", "trigger": "api"},
				              {"source": "a", "target": "b", "trigger": "api", "target_operation": "promote"}]}`,
				want: []string{"transfers[1].trigger", "transfers[3].target"}},
			"PromoteCannotApply": {reason: "The dataflow analysis finds a promote with no candidate.", body: `{"initial_state": "a",
				"states": [{"name": "a", "model_state": "candidate"}, {"name": "b", "model_state": "active"}],
				"transfers": [{"source": "a", "target": "b", "trigger": "auto", "target_operation": "promote"},
				              {"source": "b", "target": "b", "trigger": "api", "target_operation": "promote"},
				              {"source": "b", "target": "a", "trigger": "api", "target_operation": "rollback"}]}`,
				want: []string{"transfers[1].target_operation", "transfers[2].target_operation"}},
			"CompactSyntax": {reason: "A compact line that does not parse is named.", body: map[string]any{"compact": map[string]any{
				"initial_state": "a", "states": map[string]string{"a": "active"}, "transfers": []string{"a => a: api"}}},
				want: []string{"compact.transfers[0]"}},
			"CompactExpansion": {reason: "An error in the expansion names the compact member that made it.",
				body: map[string]any{"compact": map[string]any{"initial_state": "a",
					"states": map[string]string{"a": "active", "b": "inactive deleted"}, "transfers": []string{}}},
				want: []string{"compact.states.b"}},
			"CompactAndDifferentStates": {reason: "Full members beside compact must be its expansion.",
				body: withCompact, want: []string{"compact"}},
			"WrongJSONType": {reason: "The document's schema names a member of the wrong type.",
				body: `{"initial_state": "a", "states": "a"}`, want: []string{"states"}},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				body := tc.body
				if raw, ok := body.(string); ok {
					body = []byte(raw)
				}
				p := s.Do(t, "POST", "/api/v1/lifecycles", body).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
				if diff := cmp.Diff(tc.want, fields(p)); diff != "" {
					t.Errorf("%s\nfields: -want +got:\n%s\nproblem: %+v", tc.reason, diff, p)
				}
			})
		}
		t.Cleanup(func() {
			if got := ids(listAll(t, s, 50)); !slices.Equal(got, []string{"service", "simple"}) {
				t.Errorf("refused creates stored lifecycles: %v", got)
			}
		})
	})
}

func TestLifecycle_ReplaceHonoursIfMatch(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		var v1, v2, v3, v4 view
		s.Do(t, "POST", "/api/v1/lifecycles?id=mini", mini()).Want(t, http.StatusCreated).JSON(t, &v1)

		r := s.Do(t, "PUT", "/api/v1/lifecycles/mini", approval(), "If-Match", v1.ETag).Want(t, http.StatusOK)
		r.JSON(t, &v2)
		if v2.ETag != `"2"` || r.Header.Get("ETag") != v2.ETag || !v2.CreateTime.Equal(v1.CreateTime) ||
			v2.UpdateTime.Before(v1.UpdateTime) || len(v2.States) != 10 || !sameJSON(t, v2.Compact, []byte(approvalCompact)) {
			t.Errorf("replaced with compact: %+v (was %+v)", v2, v1)
		}
		s.Do(t, "PUT", "/api/v1/lifecycles/mini", mini(), "If-Match", v1.ETag).
			WantProblem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")

		// A GET's answer goes back as it is: read-only members are ignored
		// and the expansion beside compact agrees with it.
		got := s.Do(t, "GET", "/api/v1/lifecycles/mini", nil).Want(t, http.StatusOK)
		s.Do(t, "PUT", "/api/v1/lifecycles/mini", got.Body, "If-Match", v2.ETag).Want(t, http.StatusOK).JSON(t, &v3)
		if v3.ETag != `"3"` || !cmp.Equal(v3.Definition, v2.Definition) || !sameJSON(t, v3.Compact, v2.Compact) {
			t.Errorf("GET sent back changed the lifecycle: %+v", v3)
		}

		// compact null: the full form is edited and compact dropped.
		var edit map[string]any
		if err := json.Unmarshal(got.Body, &edit); err != nil {
			t.Fatal(err)
		}
		edit["compact"] = nil
		edit["states"].([]any)[0].(map[string]any)["label"] = "warning"
		s.Do(t, "PUT", "/api/v1/lifecycles/mini", edit).Want(t, http.StatusOK).JSON(t, &v4)
		if st, _ := v4.State("start"); hasCompact(v4) || st.Label != statemachine.LabelWarning {
			t.Errorf("edited in full: compact %s, start %+v; want no compact and label warning", v4.Compact, st)
		}

		p := s.Do(t, "PUT", "/api/v1/lifecycles/mini", map[string]any{"initial_state": "start", "states": []any{}}).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if diff := cmp.Diff([]string{"initial_state", "states"}, fields(p)); diff != "" {
			t.Errorf("bad replacement: fields -want +got:\n%s", diff)
		}
		body := mini()
		body["id"] = "other"
		p = s.Do(t, "PUT", "/api/v1/lifecycles/mini", body).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if diff := cmp.Diff([]string{"id"}, fields(p)); diff != "" {
			t.Errorf("id change: fields -want +got:\n%s", diff)
		}
		s.Do(t, "PUT", "/api/v1/lifecycles/nope", mini()).WantProblem(t, http.StatusNotFound, "LIFECYCLE_NOT_FOUND")

		var now view
		s.Do(t, "GET", "/api/v1/lifecycles/mini", nil).Want(t, http.StatusOK).JSON(t, &now)
		if diff := cmp.Diff(v4, now); diff != "" {
			t.Errorf("refused replacements changed the lifecycle: -want +got:\n%s", diff)
		}
	})
}

func TestLifecycle_DeleteHonoursIfMatch(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		var v view
		s.Do(t, "POST", "/api/v1/lifecycles?id=mini", mini()).Want(t, http.StatusCreated).JSON(t, &v)
		s.Do(t, "DELETE", "/api/v1/lifecycles/mini", nil, "If-Match", `"7"`).
			WantProblem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
		s.Do(t, "GET", "/api/v1/lifecycles/mini", nil).Want(t, http.StatusOK)
		s.Do(t, "DELETE", "/api/v1/lifecycles/mini", nil, "If-Match", v.ETag).Want(t, http.StatusNoContent)
		s.Do(t, "GET", "/api/v1/lifecycles/mini", nil).WantProblem(t, http.StatusNotFound, "LIFECYCLE_NOT_FOUND")
		s.Do(t, "DELETE", "/api/v1/lifecycles/mini", nil).WantProblem(t, http.StatusNotFound, "LIFECYCLE_NOT_FOUND")
		// The id is free again.
		s.Do(t, "POST", "/api/v1/lifecycles?id=mini", approval()).Want(t, http.StatusCreated)
	})
}

// Issue 22, item 16: a built-in's create_time and update_time are the day
// it shipped, not the Unix epoch (AGE 20783d).
var shipped = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

func TestLifecycle_BuiltinsAreServedAndReadOnly(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		for _, id := range []string{"simple", "service"} {
			var v view
			r := s.Do(t, "GET", "/api/v1/lifecycles/"+id, nil).Want(t, http.StatusOK)
			r.JSON(t, &v)
			if !v.Builtin || v.Path != "lifecycles/"+id || v.ETag != `"1"` || r.Header.Get("ETag") != `"1"` ||
				!hasCompact(v) || v.InitialState != "start" || !v.CreateTime.Equal(shipped) || !v.UpdateTime.Equal(shipped) {
				t.Errorf("GET %s = %+v", id, v)
			}
			s.Do(t, "PUT", "/api/v1/lifecycles/"+id, r.Body).WantProblem(t, http.StatusConflict, "LIFECYCLE_READ_ONLY")
			s.Do(t, "PUT", "/api/v1/lifecycles/"+id, mini(), "If-Match", v.ETag).
				WantProblem(t, http.StatusConflict, "LIFECYCLE_READ_ONLY")
			s.Do(t, "DELETE", "/api/v1/lifecycles/"+id, nil).WantProblem(t, http.StatusConflict, "LIFECYCLE_READ_ONLY")
		}
		var simple view
		s.Do(t, "GET", "/api/v1/lifecycles/simple", nil).Want(t, http.StatusOK).JSON(t, &simple)
		if len(simple.States) != 14 || len(simple.Transfers) != 21 {
			t.Errorf("simple has %d states and %d transfers, want 14 and 21", len(simple.States), len(simple.Transfers))
		}
		// A built-in's compact form is a valid definition of its own.
		var copied view
		s.Do(t, "POST", "/api/v1/lifecycles?id=my-simple", map[string]any{"compact": simple.Compact}).
			Want(t, http.StatusCreated).JSON(t, &copied)
		if diff := cmp.Diff(simple.Definition, copied.Definition); diff != "" {
			t.Errorf("simple's compact form re-expanded: -simple +copy:\n%s", diff)
		}
	})
}

func TestLifecycle_SurvivesARestart(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		var full, compact view
		s.Do(t, "POST", "/api/v1/lifecycles?id=mini", mini()).Want(t, http.StatusCreated).JSON(t, &full)
		s.Do(t, "POST", "/api/v1/lifecycles?id=approval", approval()).Want(t, http.StatusCreated).JSON(t, &compact)
		before := listAll(t, s, 2)

		s = s.Restart(t)
		for _, want := range []view{full, compact} {
			var got view
			s.Do(t, "GET", "/api/v1/lifecycles/"+want.ID, nil).Want(t, http.StatusOK).JSON(t, &got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s after the restart: -before +after:\n%s", want.ID, diff)
			}
		}
		if diff := cmp.Diff(before, listAll(t, s, 2)); diff != "" {
			t.Errorf("list after the restart: -before +after:\n%s", diff)
		}
		if strings.Contains(string(compact.Compact), "\n") {
			t.Errorf("stored compact keeps its whitespace: %s", compact.Compact)
		}
	})
}
