package lifecycle_test

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// The simple lifecycle end to end on a provider without in-place updates:
// create, update by replacement, a failed update, rollback, delete.
func TestOrders_SimpleLifecycle_ReplacementUpdateRollbackDelete(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)

		created := e.create(t, "web", 2)
		if created.Lifecycle != "simple" || created.State != "creating" || created.Attributes.Candidate != nil ||
			vcpu(created.Attributes.Active) != 2.0 || created.InstanceID == "" {
			t.Fatalf("created = %+v: want creating, the validated candidate promoted to active", created)
		}
		first := created.InstanceID
		e.p.WaitForCall(t, providertest.MethodCreate, first)
		e.report(t, first, "RUNNING")
		up := e.waitState(t, "web", "up")
		if up.Conditions[0].Status != "True" || up.Conditions[0].Reason != "Running" {
			t.Errorf("up conditions = %+v", up.Conditions)
		}
		// A report that changes nothing is a self-transfer without an
		// operation: no version bump, no event.
		e.report(t, first, "RUNNING")
		if again := e.get(t, "web"); again.Version != up.Version {
			t.Errorf("a repeated RUNNING bumped the version %d -> %d", up.Version, again.Version)
		}

		// Update: validated, promoted, realised by replacement.
		e.patch(t, "web", edit("vcpu.count", 3))
		second := e.newCreate(t, first)
		if spec := e.p.Creates()[1].Spec; vcpu(spec) != 3.0 {
			t.Errorf("replacement created with %v", spec)
		}
		// The order stays on the old resource until the new one runs, then
		// moves to it and is up.
		if o := e.get(t, "web"); o.State != "update_inprogress" {
			t.Errorf("during the replacement: %+v (want update_inprogress)", o)
		}
		e.report(t, second, "RUNNING")
		updated := e.waitState(t, "web", "up")
		if updated.InstanceID != second || vcpu(updated.Attributes.Active) != 3.0 ||
			vcpu(updated.Attributes.Rollback) != 2.0 || updated.Attributes.Candidate != nil {
			t.Errorf("after the update: %+v", updated)
		}
		e.p.WaitForCall(t, providertest.MethodDelete, first) // the old one is cleaned up, deferred

		// An update whose deployment fails: update_failed, then rollback. The
		// replacement never ran, so the order never left the instance that
		// runs the previous set: the rollback finds that set realised.
		e.patch(t, "web", edit("vcpu.count", 4))
		third := e.newCreate(t, first, second)
		e.report(t, third, "FAILED")
		failed := e.waitState(t, "web", "update_failed")
		if failed.InstanceID != second || failed.Status != "RUNNING" || !strings.Contains(failed.LastError, "FAILED") {
			t.Errorf("update_failed = %+v: want still on the running instance, and the reason", failed)
		}
		e.p.WaitForCall(t, providertest.MethodDelete, third) // the failed replacement is deleted
		e.setState(t, "web", "rollback", failed.Version-1).WantProblem(t, http.StatusConflict, "VERSION_MISMATCH")
		e.setState(t, "web", "up", failed.Version).WantProblem(t, http.StatusConflict, "INVALID_TRANSFER")
		e.setState(t, "web", "rollback", failed.Version).Want(t, http.StatusOK)
		back := e.waitState(t, "web", "up")
		if back.InstanceID != second || vcpu(back.Attributes.Active) != 3.0 || vcpu(back.Attributes.Candidate) != 4.0 {
			t.Errorf("after rollback: %+v", back)
		}
		if n := len(e.p.Creates()); n != 3 {
			t.Errorf("%d creates, want 3: a rollback to the set the instance runs creates nothing", n)
		}

		// Delete: on_delete to deleting, the provider deletes, terminated. The
		// generation counted the create, two promoted updates and the rollback;
		// the delete bumps it once more.
		var del order
		e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusAccepted).JSON(t, &del)
		if del.DeletedAt == nil || del.State != "deleting" || del.Generation != back.Generation+1 || back.Generation != 4 || del.Conditions[0].Reason != "Deleting" {
			t.Errorf("deleted = %+v", del)
		}
		e.p.WaitForCall(t, providertest.MethodDelete, second)
		e.waitState(t, "web", "terminated")
		e.s.Do(t, "PATCH", "/api/v1/catalog-item-instances/web", edit("vcpu.count", 1)).
			WantProblem(t, http.StatusConflict, "DELETING")

		want := []string{">start", "start>acknowledged", "acknowledged>creating", "creating>up",
			"up>update_start", "update_start>update_acknowledged", "update_acknowledged>update_inprogress",
			"update_inprogress>up",
			"up>update_start", "update_start>update_acknowledged", "update_acknowledged>update_inprogress",
			"update_inprogress>update_failed", "update_failed>rollback", "rollback>up",
			"up>up", "up>deleting", "deleting>terminated"}
		// The old instances' cleanups are noted when their deletions are
		// done, which may be after the next transfer began: they are
		// checked apart from the transfers.
		var events []event
		var cleaned []string
		for _, ev := range e.events(t, "web") {
			if ev.Trigger == "cleanup" {
				cleaned = append(cleaned, ev.InstanceID)
				continue
			}
			events = append(events, ev)
		}
		if got := path(events); !slices.Equal(got, want) {
			t.Errorf("events:\n got %v\nwant %v", got, want)
		}
		for i, ev := range events {
			if ev.Version != int64(i+1) {
				t.Errorf("event %d has version %d", i, ev.Version)
			}
		}
		if slices.Sort(cleaned); !slices.Equal(cleaned, slices.Sorted(slices.Values([]string{first, third}))) {
			t.Errorf("cleanups noted for %v, want the replaced %s and the failed %s", cleaned, first, third)
		}
	})
}

// Issue 22, item 2: what the provider reports about a running order is in
// its log, saying who reported what, without moving the order's version; a
// report that changes nothing the order shows is not logged.
func TestOrders_ProviderReportsAreLogged(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		o := e.up(t, "web", 2)
		report := func(status, message string, restarts int) {
			e.s.Do(t, "PUT", "/api/v1/service-type-instances/"+o.InstanceID+"/status", map[string]any{
				"status": status, "message": message, "restart_count": restarts,
				"observed_time": time.Now().UTC().Format(time.RFC3339Nano),
			}).Want(t, http.StatusOK)
		}
		up := e.get(t, "web")
		report("RUNNING", "pid 2", 1)
		report("RUNNING", "pid 2", 1) // the same again: nothing to log
		if got := e.get(t, "web"); got.Version != up.Version || got.State != "up" {
			t.Errorf("after the reports: version %d state %s, want version %d (a report moves no version) and up",
				got.Version, got.State, up.Version)
		}

		// The order's reconcile logs a report soon after it is taken.
		var log, reports []event
		poll.Until(t, "the restart is logged", func() bool {
			log, reports = e.log(t, "web"), nil
			for _, ev := range log {
				if ev.Trigger == "report" {
					reports = append(reports, ev)
				}
			}
			return len(reports) >= 2
		})
		// The report that made the order up (PROVISIONING -> RUNNING), then the restart.
		if len(reports) != 2 {
			t.Fatalf("report events %+v, want 2 (the RUNNING that made it up, the restart); log %+v", reports, log)
		}
		first, restart := reports[0], reports[1]
		if first.ReportedBy != "vm-sp" || first.From != "creating" || first.To != "creating" ||
			first.Changes["status"]["to"] != "RUNNING" {
			t.Errorf("first report = %+v, want vm-sp making the status RUNNING while creating", first)
		}
		wantChanges := map[string]map[string]any{
			"status_message": {"from": "", "to": "pid 2"},
			"restart_count":  {"from": nil, "to": float64(1)},
		}
		if restart.ReportedBy != "vm-sp" || restart.Version != up.Version || restart.From != "up" || restart.To != "up" ||
			fmt.Sprint(restart.Changes) != fmt.Sprint(wantChanges) {
			t.Errorf("restart report = %+v, want vm-sp at version %d in up changing %v", restart, up.Version, wantChanges)
		}
		// The log stays in order: the report that made the order up comes
		// before the transfer it fired, the restart after everything.
		at := slices.IndexFunc(log, func(ev event) bool { return ev.Trigger == "resource" && ev.To == "up" })
		if at < 1 || log[at-1].Trigger != "report" || log[len(log)-1].Trigger != "report" {
			t.Errorf("log %+v, want the first report just before creating>up and the restart last", log)
		}
	})
}

// On a provider that updates in place, the same instance takes the new spec.
func TestOrders_UpdateInPlace(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, true)
		o := e.up(t, "db", 2)
		e.patch(t, "db", edit("vcpu.count", 4))
		call := e.p.WaitForCall(t, providertest.MethodUpdate, o.InstanceID)
		if vcpu(call.Spec) != 4.0 {
			t.Errorf("update sent %v", call.Spec)
		}
		e.report(t, o.InstanceID, "RUNNING")
		up := e.waitState(t, "db", "up")
		if up.InstanceID != o.InstanceID || vcpu(up.Attributes.Active) != 4.0 || len(e.p.Creates()) != 1 {
			t.Errorf("after the update: %+v, %d creates", up, len(e.p.Creates()))
		}
		var r struct {
			ValidatedRequest map[string]any `json:"validated_request"`
		}
		e.s.Do(t, "GET", "/api/v1/resources/"+o.InstanceID, nil).Want(t, http.StatusOK).JSON(t, &r)
		if vcpu(r.ValidatedRequest) != 4.0 {
			t.Errorf("resource = %+v", r)
		}
	})
}

// A policy refuses the update: update_rejected keeps the refused
// candidate; aborting clears it and the running set stays.
func TestOrders_UpdateValidationFailure(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		e.up(t, "app", 2)
		e.s.Do(t, "POST", "/api/v1/policies?id=small", map[string]any{
			"display_name": "small", "policy_type": "GLOBAL", "priority": 5,
			"rego_code": "package steward.small\n\nmain := {\"rejected\": true, \"rejection_reason\": \"at most 3 vCPUs\"} if {\n\tinput.spec.vcpu.count > 3\n} else := {}\n",
		}).Want(t, http.StatusCreated)
		// Creating a big one is refused in the request, and nothing is stored.
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=big", map[string]any{
			"catalog_item_id": "small-vm", "user_values": []any{map[string]any{"path": "vcpu.count", "value": 4}},
		}).WantProblem(t, http.StatusNotAcceptable, "POLICY_REJECTED")
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances/big?show_deleted=true", nil).
			WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")

		e.patch(t, "app", edit("vcpu.count", 4))
		rejected := e.waitState(t, "app", "update_rejected")
		if vcpu(rejected.Attributes.Candidate) != 4.0 || vcpu(rejected.Attributes.Active) != 2.0 ||
			!strings.Contains(rejected.LastError, "at most 3 vCPUs") {
			t.Errorf("update_rejected = %+v", rejected)
		}
		if n := len(e.p.Creates()) + len(e.p.Updates()); n != 1 {
			t.Errorf("the provider got %d calls; want only the first create", n)
		}
		e.setState(t, "app", "up", rejected.Version).Want(t, http.StatusOK)
		aborted := e.get(t, "app")
		if aborted.State != "up" || aborted.Attributes.Candidate != nil || vcpu(aborted.Attributes.Active) != 2.0 {
			t.Errorf("after abort: %+v", aborted)
		}
		evs := e.events(t, "app")
		last := evs[len(evs)-1]
		if last.Trigger != "api" || last.Operation != "clear candidate" {
			t.Errorf("abort event = %+v", last)
		}
		rejection := evs[len(evs)-2]
		if rejection.To != "update_rejected" || !strings.Contains(rejection.Error, "at most 3 vCPUs") {
			t.Errorf("rejection event = %+v", rejection)
		}
	})
}

// x-modifier: r is never written by a client, rw only at creation.
func TestOrders_Modifiers(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		p := e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=x", map[string]any{
			"catalog_item_id": "small-vm", "user_values": []any{map[string]any{"path": "ip", "value": "10.0.0.9"}},
		}).WantProblem(t, http.StatusBadRequest, "ATTRIBUTE_NOT_UPDATABLE")
		if len(p.Fields) != 1 || p.Fields[0]["field"] != "user_values[0].path" {
			t.Errorf("create with an r attribute: %+v", p)
		}
		e.up(t, "m", 2)
		p = e.s.Do(t, "PATCH", "/api/v1/catalog-item-instances/m", map[string]any{"edits": []any{
			map[string]any{"path": "guest_os.type", "value": "debian-12"},
			map[string]any{"path": "ip", "value": "10.0.0.9"},
			map[string]any{"path": "vcpu.count", "value": 3},
		}}).WantProblem(t, http.StatusBadRequest, "ATTRIBUTE_NOT_UPDATABLE")
		var fields []string
		for _, f := range p.Fields {
			fields = append(fields, f["field"].(string))
		}
		if !slices.Equal(fields, []string{"guest_os.type", "ip"}) {
			t.Errorf("not updatable fields = %v", fields)
		}
		if o := e.get(t, "m"); o.State != "up" || o.Attributes.Candidate != nil {
			t.Errorf("a refused PATCH changed the order: %+v", o)
		}
		// A value the schema refuses is a 400 too, naming it.
		e.s.Do(t, "PATCH", "/api/v1/catalog-item-instances/m", edit("vcpu.count", 0)).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		// user_values go through the catalog item's fields.
		e.patch(t, "m", map[string]any{"user_values": []any{map[string]any{"path": "vcpu.count", "value": 3}}})
		poll.Until(t, "the update reaches the provider", func() bool { return len(e.p.Creates()) == 2 })
	})
}

// Version rules and the refusals of PATCH and :setState.
func TestOrders_StateAndVersionRules(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		o := e.create(t, "v", 2)
		// creating has no on_update transfer.
		e.s.Do(t, "PATCH", "/api/v1/catalog-item-instances/v", edit("vcpu.count", 3)).
			WantProblem(t, http.StatusConflict, "INVALID_STATE")
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances/v:setState", map[string]any{"target_state": "up"}).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		e.setState(t, "v", "up", o.Version).WantProblem(t, http.StatusConflict, "INVALID_TRANSFER")
		e.setState(t, "nope", "up", 1).WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")
		// Labels alone change without a transfer; If-Match guards it.
		e.s.Do(t, "PATCH", "/api/v1/catalog-item-instances/v", map[string]any{"labels": map[string]any{"team": "a"}},
			"If-Match", `"999"`).WantProblem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
		labelled := e.patch(t, "v", map[string]any{"labels": map[string]any{"team": "a"}})
		if labelled.State != "creating" || labelled.Version != o.Version+1 {
			t.Errorf("labels PATCH: %+v", labelled)
		}
		// DELETE in creating runs creating's on_delete at once.
		e.p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
		e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/v", nil).Want(t, http.StatusAccepted)
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		e.waitState(t, "v", "terminated")
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances/v/events?page_token=bad", nil).
			WantProblem(t, http.StatusBadRequest, "INVALID_PAGE_TOKEN")
	})
}

func TestOrders_ListFilters(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		for id, labels := range map[string]map[string]any{
			"a": {"env": "prod", "team": "x"}, "b": {"env": "prod"}, "c": {"env": "dev", "team": "x"},
		} {
			e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, map[string]any{
				"catalog_item_id": "small-vm", "labels": labels,
			}).Want(t, http.StatusCreated)
		}
		list := func(query string) []string {
			var page struct {
				Results []order `json:"results"`
			}
			e.s.Do(t, "GET", "/api/v1/catalog-item-instances?"+query, nil).Want(t, http.StatusOK).JSON(t, &page)
			var ids []string
			for _, o := range page.Results {
				ids = append(ids, o.ID)
			}
			slices.Sort(ids)
			return ids
		}
		for query, want := range map[string][]string{
			"label=env:prod":                 {"a", "b"},
			"label=env:prod&label=team:x":    {"a"},
			"label=team:x":                   {"a", "c"},
			"label=env:qa":                   nil,
			"service_type=vm&state=creating": {"a", "b", "c"},
			"catalog_item_id=nope":           nil,
		} {
			if got := list(query); !slices.Equal(got, want) {
				t.Errorf("?%s = %v, want %v", query, got, want)
			}
		}
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances?label=nocolon", nil).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
	})
}

// A list passes the attribute sets through as stored: they must read the
// same as the order's own GET, on both engines.
func TestOrders_ListShowsTheSameAttributesAsGet(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		got := e.up(t, "web", 3)
		var list struct {
			Results []order `json:"results"`
		}
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances", nil).Want(t, http.StatusOK).JSON(t, &list)
		if len(list.Results) != 1 {
			t.Fatalf("listed %d orders, want 1", len(list.Results))
		}
		listed := list.Results[0]
		if !reflect.DeepEqual(listed.Attributes, got.Attributes) || vcpu(listed.Attributes.Active) != 3.0 {
			t.Errorf("listed attributes %+v, GET's %+v", listed.Attributes, got.Attributes)
		}
		// Every member, not only the attributes (the list encodes its own).
		var all struct {
			Results []map[string]any `json:"results"`
		}
		var one map[string]any
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances", nil).Want(t, http.StatusOK).JSON(t, &all)
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances/"+got.ID, nil).Want(t, http.StatusOK).JSON(t, &one)
		// What is still being removed is on one order's answers only.
		if c, ok := one["cleanup"].([]any); !ok || len(c) != 0 {
			t.Errorf("GET cleanup %v, want []", one["cleanup"])
		}
		delete(one, "cleanup")
		if !reflect.DeepEqual(all.Results[0], one) {
			t.Errorf("listed %v\nGET     %v", all.Results[0], one)
		}
	})
}
