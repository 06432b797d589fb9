package placement_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

type operation struct {
	ID       string          `json:"id"`
	Path     string          `json:"path"`
	Done     bool            `json:"done"`
	Metadata map[string]any  `json:"metadata"`
	Response json.RawMessage `json:"response"`
	Error    json.RawMessage `json:"error"`
}

type instance struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Provider string `json:"provider_name"`
	Deletion *struct {
		Status        string `json:"status"`
		CleanupTaskID string `json:"cleanup_task_id"`
	} `json:"deletion"`
}

type rehydrationNote struct {
	Outcome       string `json:"outcome"`
	NewInstanceID string `json:"new_instance_id"`
	OperationID   string `json:"operation_id"`
}

// rehydrate POSTs path (a :rehydrate URL) and checks the 202 Operation.
func (e *env) rehydrate(t *testing.T, path string, body any, target, oldInstanceID string) operation {
	t.Helper()
	var op operation
	res := e.s.Do(t, "POST", path, body).Want(t, http.StatusAccepted)
	res.JSON(t, &op)
	if res.Header.Get("Location") != "/api/v1/operations/"+op.ID || op.Path != "operations/"+op.ID || op.Done ||
		op.Metadata["kind"] != "rehydrate" || op.Metadata["target"] != target ||
		op.Metadata["old_instance_id"] != oldInstanceID || op.Metadata["new_instance_id"] == "" ||
		op.Metadata["new_instance_id"] == oldInstanceID {
		t.Fatalf("rehydrate answered %+v, Location %q", op, res.Header.Get("Location"))
	}
	return op
}

func (e *env) waitOperation(t *testing.T, id string) operation {
	t.Helper()
	var op operation
	poll.Until(t, "operation "+id+" is done", func() bool {
		e.s.Do(t, "GET", "/api/v1/operations/"+id, nil).Want(t, http.StatusOK).JSON(t, &op)
		return op.Done
	})
	return op
}

func (e *env) operation(t *testing.T, id string) operation {
	t.Helper()
	var op operation
	e.s.Do(t, "GET", "/api/v1/operations/"+id, nil).Want(t, http.StatusOK).JSON(t, &op)
	return op
}

func (e *env) instance(t *testing.T, id string) instance {
	t.Helper()
	var in instance
	e.s.Do(t, "GET", "/api/v1/service-type-instances/"+id+"?show_deleted=true", nil).Want(t, http.StatusOK).JSON(t, &in)
	return in
}

// upOrder orders id with vcpus and brings it up.
func (e *env) upOrder(t *testing.T, id string, vcpus int) order {
	t.Helper()
	var o order
	e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, orderBody(vcpus)).Want(t, http.StatusCreated).JSON(t, &o)
	e.p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
	e.report(t, o.InstanceID, "RUNNING")
	return e.waitState(t, id, "up")
}

// runNew reports a rehydration's new instance RUNNING once its create's
// answer (PROVISIONING) is recorded: the rehydration completes only then.
func (e *env) runNew(t *testing.T, id string) {
	t.Helper()
	e.waitAnswered(t, id)
	e.report(t, id, "RUNNING")
}

// waitAnswered waits until the create of instance id is answered
// (PROVISIONING): before, the instance may not be recorded yet (404).
func (e *env) waitAnswered(t *testing.T, id string) {
	t.Helper()
	poll.Until(t, "the create of "+id+" is answered", func() bool {
		res := e.s.Do(t, "GET", "/api/v1/service-type-instances/"+id, nil)
		if res.Status == http.StatusNotFound {
			return false
		}
		var in instance
		res.Want(t, http.StatusOK).JSON(t, &in)
		return in.Status == "PROVISIONING"
	})
}

func wantResponse(t *testing.T, op operation, oldID, newID, providerName string) {
	t.Helper()
	var resp map[string]any
	if err := json.Unmarshal(op.Response, &resp); err != nil || len(op.Error) != 0 {
		t.Fatalf("operation %+v: response %s (%v), error %s", op, op.Response, err, op.Error)
	}
	want := map[string]any{"old_instance_id": oldID, "new_instance_id": newID, "provider_name": providerName}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("operation response %v, want %v", resp, want)
	}
}

// wantFailed checks that op ended with no response and an error of reason.
func wantFailed(t *testing.T, op operation, reason string) {
	t.Helper()
	var problem struct {
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(op.Error, &problem); err != nil || problem.Reason != reason || len(op.Response) != 0 {
		t.Fatalf("operation %+v: want it failed with %s", op, reason)
	}
}

func TestRehydrate_OriginalIntentUnderTodaysPolicies(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		o := e.upOrder(t, "rh", 3)
		first := e.resource(t, o.InstanceID)

		// The catalog item changes, and a policy is added, after the order.
		e.s.Do(t, "PATCH", "/api/v1/catalog-items/small-fedora-vm", map[string]any{
			"defaults": map[string]any{"memory": map[string]any{"size": "8GB"}, "guest_os": map[string]any{"type": "fedora-40"}},
		}).Want(t, http.StatusOK)
		e.policy(t, "ha", "package steward.ha\n\nmain := {\"patch\": {\"ha\": true}}\n")

		op := e.rehydrate(t, "/api/v1/catalog-item-instances/rh:rehydrate", nil, "catalog-item-instances/rh", o.InstanceID)
		newID := op.Metadata["new_instance_id"].(string)
		call := e.p.WaitForCall(t, providertest.MethodCreate, newID)
		mem, _ := call.Spec["memory"].(map[string]any)
		vcpu, _ := call.Spec["vcpu"].(map[string]any)
		if call.Spec["ha"] != true || mem["size"] != "2GB" || vcpu["count"] != 3.0 || call.Metadata.OrderID != "rh" {
			t.Errorf("new create got %+v: want the original intent with today's patch", call)
		}
		e.runNew(t, newID)
		done := e.waitOperation(t, op.ID)
		wantResponse(t, done, o.InstanceID, newID, "vm-sp")

		// The order is repointed; the new resource keeps the intent.
		now := e.order(t, "rh")
		// The active set is what the new resource runs, today's patch
		// applied; the intent stays as requested.
		if now.InstanceID != newID || now.ProviderName != "vm-sp" || now.Attributes.Active["ha"] != true ||
			now.Attributes.Requested["ha"] != nil {
			t.Errorf("order after rehydration %+v", now)
		}
		r := e.resource(t, newID)
		if !reflect.DeepEqual(r.OriginalRequest, first.OriginalRequest) || r.ValidatedRequest["ha"] != true ||
			r.PolicyStatus != "MODIFIED" || r.CatalogItemInstanceID != "rh" {
			t.Errorf("new resource %+v; first %+v", r, first)
		}
		// The old resource is removed and its instance deleted (deferred).
		e.s.Do(t, "GET", "/api/v1/resources/"+o.InstanceID, nil).WantProblem(t, http.StatusNotFound, "RESOURCE_NOT_FOUND")
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		poll.Until(t, "old resource DELETED", func() bool { return e.resource(t, o.InstanceID).Status == "DELETED" })

		// Status reports for the new instance now move the order; the
		// old instance's don't.
		e.report(t, newID, "FAILED")
		e.waitState(t, "rh", "failed")
		e.report(t, newID, "RUNNING")
		if up := e.waitState(t, "rh", "up"); up.Status != "RUNNING" {
			t.Errorf("order %+v", up)
		}

		// Rehydrating again works the same way, from the original intent.
		op2 := e.rehydrate(t, "/api/v1/resources/"+newID+":rehydrate", map[string]any{"new_instance_id": "third"},
			"resources/"+newID, newID)
		if op2.Metadata["new_instance_id"] != "third" {
			t.Fatalf("second rehydration %+v", op2)
		}
		e.runNew(t, "third")
		wantResponse(t, e.waitOperation(t, op2.ID), newID, "third", "vm-sp")
		if e.order(t, "rh").InstanceID != "third" ||
			!reflect.DeepEqual(e.resource(t, "third").OriginalRequest, first.OriginalRequest) {
			t.Errorf("after the second rehydration: order %+v, resource %+v", e.order(t, "rh"), e.resource(t, "third"))
		}
		e.p.WaitForCall(t, providertest.MethodDelete, newID)
		if n := len(e.p.Creates()); n != 3 {
			t.Errorf("provider creates = %d, want 3 (one per instance)", n)
		}
	})
}

func TestRehydrate_RejectedOrMissingChangesNothing(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		o := e.upOrder(t, "rj", 3)
		creates := len(e.p.Creates())

		e.policy(t, "nobig", "package steward.nobig\n\nmain := {\"rejected\": true, \"rejection_reason\": \"too big\"} if input.spec.vcpu.count > 2\n")
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances/rj:rehydrate", nil).WantProblem(t, http.StatusNotAcceptable, "POLICY_REJECTED")
		e.s.Do(t, "POST", "/api/v1/resources/"+o.InstanceID+":rehydrate", map[string]any{"new_instance_id": "other"}).
			WantProblem(t, http.StatusNotAcceptable, "POLICY_REJECTED")

		// Nothing changed: the order, the resource, the instance.
		if now := e.order(t, "rj"); now.InstanceID != o.InstanceID || now.State != "up" {
			t.Errorf("order after a rejected rehydration %+v", now)
		}
		r := e.resource(t, o.InstanceID)
		if r.Status != "RUNNING" {
			t.Errorf("old resource %+v", r)
		}
		var raw struct {
			LastRehydration rehydrationNote `json:"last_rehydration"`
		}
		e.s.Do(t, "GET", "/api/v1/resources/"+o.InstanceID, nil).Want(t, http.StatusOK).JSON(t, &raw)
		if raw.LastRehydration.Outcome != "REJECTED" || raw.LastRehydration.NewInstanceID != "other" {
			t.Errorf("last_rehydration %+v, want the rejection noted", raw.LastRehydration)
		}
		if in := e.instance(t, o.InstanceID); in.Deletion != nil || in.Status != "RUNNING" {
			t.Errorf("old instance %+v", in)
		}
		e.s.Do(t, "GET", "/api/v1/resources/other?show_deleted=true", nil).WantProblem(t, http.StatusNotFound, "RESOURCE_NOT_FOUND")
		if len(e.p.Creates()) != creates || len(e.p.Deletes()) != 0 {
			t.Errorf("provider got %d creates and %d deletes", len(e.p.Creates())-creates, len(e.p.Deletes()))
		}
		// The refusal is a failed operation.
		var ops struct {
			Results []operation `json:"results"`
		}
		e.s.Do(t, "GET", "/api/v1/operations?kind=rehydrate", nil).Want(t, http.StatusOK).JSON(t, &ops)
		if len(ops.Results) != 2 || !ops.Results[0].Done || len(ops.Results[0].Error) == 0 {
			t.Fatalf("operations %+v", ops.Results)
		}
		var problem struct {
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal(ops.Results[0].Error, &problem); err != nil || problem.Reason != "POLICY_REJECTED" {
			t.Errorf("operation error %s", ops.Results[0].Error)
		}

		// No intent: 404.
		e.s.Do(t, "POST", "/api/v1/resources/nope:rehydrate", map[string]any{"new_instance_id": "x"}).
			WantProblem(t, http.StatusNotFound, "RESOURCE_NOT_FOUND")
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances/nope:rehydrate", nil).WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")
		e.s.Do(t, "POST", "/api/v1/resources/"+o.InstanceID+":rehydrate", map[string]any{}).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
	})
}

func TestRehydrate_MovesProviderCreateBeforeDelete(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		// A blocked create must outlast the test's wait, not time out.
		e := setup(t, engine, func(c *server.Config) { c.ProviderTimeout = time.Minute })
		b := providertest.New(t)
		o := e.upOrder(t, "mv", 2)
		e.s.Do(t, "POST", "/api/v1/providers", b.Registration("vm-sp-b", "vm")).Want(t, http.StatusCreated)
		e.policy(t, "tob", "package steward.tob\n\nmain := {\"selected_provider\": \"vm-sp-b\"}\n")

		b.BlockCreates()
		op := e.rehydrate(t, "/api/v1/resources/"+o.InstanceID+":rehydrate", map[string]any{"new_instance_id": "moved"},
			"resources/"+o.InstanceID, o.InstanceID)
		b.WaitForCall(t, providertest.MethodCreate, "moved")

		// While the new create is not accepted: the old stays current,
		// with no cleanup task, and a second rehydration is refused.
		if now := e.order(t, "mv"); now.InstanceID != o.InstanceID || now.ProviderName != "vm-sp" {
			t.Errorf("order during rehydration %+v", now)
		}
		if in := e.instance(t, o.InstanceID); in.Deletion != nil {
			t.Errorf("old instance queued for deletion before the new one was accepted: %+v", in)
		}
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances/mv:rehydrate", nil).WantProblem(t, http.StatusConflict, "REHYDRATION_IN_PROGRESS")
		e.s.Do(t, "POST", "/api/v1/resources/"+o.InstanceID+":rehydrate", map[string]any{"new_instance_id": "again"}).
			WantProblem(t, http.StatusConflict, "REHYDRATION_IN_PROGRESS")
		if r := e.resource(t, "moved"); r.ProviderName != "vm-sp-b" || r.Status != "PENDING" {
			t.Errorf("new resource during rehydration %+v", r)
		}
		b.UnblockCreates()
		// Accepted but not running: the old instance serves on, not queued
		// for deletion, and the order stays on it (create before delete:
		// never without a running instance).
		e.waitAnswered(t, "moved")
		e.report(t, "moved", "PROVISIONING")
		if now := e.order(t, "mv"); now.InstanceID != o.InstanceID || now.State != "up" || now.Status != "RUNNING" {
			t.Errorf("order moved by the new instance before it ran: %+v", now)
		}
		if in := e.instance(t, o.InstanceID); in.Deletion != nil {
			t.Errorf("old instance queued for deletion before the new one ran: %+v", in)
		}
		if op := e.operation(t, op.ID); op.Done {
			t.Errorf("rehydration done before its new instance ran: %+v", op)
		}
		e.report(t, "moved", "RUNNING")
		wantResponse(t, e.waitOperation(t, op.ID), o.InstanceID, "moved", "vm-sp-b")
		if now := e.order(t, "mv"); now.InstanceID != "moved" || now.ProviderName != "vm-sp-b" {
			t.Errorf("order after rehydration %+v", now)
		}
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		e.report(t, "moved", "RUNNING")
		poll.Until(t, "order status RUNNING", func() bool { return e.order(t, "mv").Status == "RUNNING" })

		// Done: another rehydration may start.
		e.rehydrate(t, "/api/v1/catalog-item-instances/mv:rehydrate", nil, "catalog-item-instances/mv", "moved")
	})
}

func TestRehydrate_CleanupAfterOldProviderComesBack(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		o := e.upOrder(t, "cb", 2)
		b := providertest.New(t)
		e.s.Do(t, "POST", "/api/v1/providers", b.Registration("vm-sp-b", "vm")).Want(t, http.StatusCreated)

		e.p.GoDown()
		poll.Until(t, "vm-sp unavailable", func() bool {
			var p struct {
				Status string `json:"status"`
			}
			e.s.Do(t, "GET", "/api/v1/providers/vm-sp", nil).Want(t, http.StatusOK).JSON(t, &p)
			return p.Status == "unavailable"
		})
		// Placement's default rule now picks the healthy provider.
		op := e.rehydrate(t, "/api/v1/catalog-item-instances/cb:rehydrate", nil, "catalog-item-instances/cb", o.InstanceID)
		newID := op.Metadata["new_instance_id"].(string)
		e.runNew(t, newID)
		wantResponse(t, e.waitOperation(t, op.ID), o.InstanceID, newID, "vm-sp-b")
		if now := e.order(t, "cb"); now.InstanceID != newID || now.ProviderName != "vm-sp-b" {
			t.Errorf("order %+v", now)
		}
		// The old instance waits in the cleanup queue for its provider.
		in := e.instance(t, o.InstanceID)
		if in.Deletion == nil || in.Status == "DELETED" {
			t.Fatalf("old instance %+v: want a pending deletion", in)
		}
		e.p.ComeBack()
		poll.Until(t, "old instance DELETED", func() bool { return e.instance(t, o.InstanceID).Status == "DELETED" })
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		if r := e.resource(t, o.InstanceID); r.Status != "DELETED" {
			t.Errorf("old resource %+v", r)
		}
		if now := e.order(t, "cb"); now.InstanceID != newID || now.State != "up" {
			t.Errorf("order after cleanup %+v", now)
		}
	})
}

func TestRehydrate_RefusedCreateLeavesTheOldCurrent(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		o := e.upOrder(t, "rf", 2)
		e.p.FailCreate(http.StatusUnprocessableEntity, `{"error":"no such image"}`)
		op := e.rehydrate(t, "/api/v1/resources/"+o.InstanceID+":rehydrate", map[string]any{"new_instance_id": "refused"},
			"resources/"+o.InstanceID, o.InstanceID)
		done := e.waitOperation(t, op.ID)
		if len(done.Error) == 0 || len(done.Response) != 0 {
			t.Fatalf("operation %+v: want an error", done)
		}
		if now := e.order(t, "rf"); now.InstanceID != o.InstanceID || now.State != "up" {
			t.Errorf("order after a refused create %+v", now)
		}
		if r := e.resource(t, "refused"); r.Status != "FAILED" {
			t.Errorf("new resource %+v, want FAILED", r)
		}
		var raw struct {
			Status          string          `json:"status"`
			LastRehydration rehydrationNote `json:"last_rehydration"`
		}
		e.s.Do(t, "GET", "/api/v1/resources/"+o.InstanceID, nil).Want(t, http.StatusOK).JSON(t, &raw)
		if raw.Status != "RUNNING" || raw.LastRehydration.Outcome != "FAILED" || raw.LastRehydration.OperationID != op.ID {
			t.Errorf("old resource %+v", raw)
		}
		if in := e.instance(t, o.InstanceID); in.Deletion != nil {
			t.Errorf("old instance %+v queued for deletion", in)
		}
		// The failed rehydration does not block the next one.
		e.p.SucceedCreates()
		op2 := e.rehydrate(t, "/api/v1/catalog-item-instances/rf:rehydrate", nil, "catalog-item-instances/rf", o.InstanceID)
		e.runNew(t, op2.Metadata["new_instance_id"].(string))
		wantResponse(t, e.waitOperation(t, op2.ID), o.InstanceID, op2.Metadata["new_instance_id"].(string), "vm-sp")
	})
}

// A new instance the provider accepted but that fails before it runs
// fails the rehydration (NEW_INSTANCE_FAILED): the new instance is
// deleted, the old one was never queued for deletion and the order stays
// up on it.
func TestRehydrate_NewInstanceThatFailsLeavesTheOldServing(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		o := e.upOrder(t, "nf", 2)
		op := e.rehydrate(t, "/api/v1/catalog-item-instances/nf:rehydrate", nil, "catalog-item-instances/nf", o.InstanceID)
		newID := op.Metadata["new_instance_id"].(string)
		e.waitAnswered(t, newID)
		e.report(t, newID, "FAILED")
		done := e.waitOperation(t, op.ID)
		wantFailed(t, done, "NEW_INSTANCE_FAILED")
		if now := e.order(t, "nf"); now.InstanceID != o.InstanceID || now.State != "up" || now.Status != "RUNNING" {
			t.Errorf("order after a failed new instance %+v", now)
		}
		if in := e.instance(t, o.InstanceID); in.Deletion != nil {
			t.Errorf("old instance %+v queued for deletion", in)
		}
		e.p.WaitForCall(t, providertest.MethodDelete, newID)
		if r := e.resource(t, newID); r.DeleteTime == nil {
			t.Errorf("new resource %+v: want it deleted", r)
		}
	})
}

// An order deleted while its rehydration's create is under way keeps its
// old resource (its deletion takes it): the order's reconcile abandons the
// replacement, so the new instance is deleted too and the operation fails
// with ORDER_GONE, whichever of the deletion and the create commits first.
func TestRehydrate_OrderDeletedMeanwhileDeletesTheNewInstance(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		o := e.upOrder(t, "gone", 2)
		e.p.BlockCreates()
		op := e.rehydrate(t, "/api/v1/catalog-item-instances/gone:rehydrate", nil, "catalog-item-instances/gone",
			o.InstanceID)
		newID := op.Metadata["new_instance_id"].(string)
		e.p.WaitForCall(t, providertest.MethodCreate, newID)

		e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/gone", nil).Want(t, http.StatusAccepted)
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		e.p.UnblockCreates()
		e.runNew(t, newID)

		done := e.waitOperation(t, op.ID)
		wantFailed(t, done, "ORDER_GONE")
		e.p.WaitForCall(t, providertest.MethodDelete, newID)
		if r := e.resource(t, newID); r.DeleteTime == nil {
			t.Errorf("new resource %+v: want it deleted", r)
		}
		if now := e.order(t, "gone"); now.InstanceID != o.InstanceID {
			t.Errorf("order %+v moved to the new instance after its deletion", now)
		}
	})
}

// An order deleted while its rehydration waits for the new instance to run
// does not wait on: the operation fails with ORDER_GONE and the new instance
// is deleted, without its ever running.
func TestRehydrate_OrderDeletedWhileTheNewInstanceStartsStopsTheWait(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		o := e.upOrder(t, "left", 2)
		op := e.rehydrate(t, "/api/v1/catalog-item-instances/left:rehydrate", nil, "catalog-item-instances/left",
			o.InstanceID)
		newID := op.Metadata["new_instance_id"].(string)
		e.waitAnswered(t, newID) // PROVISIONING, and never reported RUNNING
		e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/left", nil).Want(t, http.StatusAccepted)

		done := e.waitOperation(t, op.ID)
		wantFailed(t, done, "ORDER_GONE")
		e.p.WaitForCall(t, providertest.MethodDelete, newID)
		if r := e.resource(t, newID); r.DeleteTime == nil {
			t.Errorf("new resource %+v: want it deleted", r)
		}
	})
}
