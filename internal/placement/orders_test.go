package placement_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

func TestOrder_CreateUpDeleteTerminated(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.policy(t, "ha", "package steward.ha\n\nmain := {\"patch\": {\"ha\": true}}\n")

		var o order
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=my-vm", orderBody(3)).Want(t, http.StatusCreated).JSON(t, &o)
		if o.ID != "my-vm" || o.Path != "catalog-item-instances/my-vm" || o.State != "creating" || o.InstanceID == "" ||
			o.InstanceID == o.ID || o.ProviderName != "vm-sp" || o.Generation != 1 || len(o.Conditions) != 1 ||
			o.Conditions[0].Reason != "Provisioning" || o.Conditions[0].Status != "False" {
			t.Fatalf("created %+v", o)
		}
		// The validated candidate was promoted: the active set is what runs,
		// the policy's patch applied (the validated request); the intent
		// stays beside it as requested.
		if o.Attributes.Active["ha"] != true || o.Attributes.Active["vcpu"] == nil || o.Attributes.Candidate != nil ||
			o.Attributes.Requested["ha"] != nil || o.Attributes.Requested["vcpu"] == nil {
			t.Errorf("attributes %+v: want the patched set active and the intent requested", o.Attributes)
		}

		// The provider gets the validated spec, with the policy's patch.
		call := e.p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
		if call.Spec["ha"] != true || call.Metadata.OrderID != "my-vm" || call.Metadata.Labels["env"] != "dev" {
			t.Errorf("provider got %+v", call)
		}
		// Placement keeps the unpatched intent and the validated request.
		r := e.resource(t, o.InstanceID)
		if r.CatalogItemInstanceID != "my-vm" || r.PolicyStatus != "MODIFIED" || r.ProviderName != "vm-sp" ||
			r.OriginalRequest["ha"] != nil || r.ValidatedRequest["ha"] != true {
			t.Errorf("resource %+v", r)
		}
		if vcpu, _ := r.OriginalRequest["vcpu"].(map[string]any); vcpu["count"] != 3.0 {
			t.Errorf("original_request %v lacks the user's vcpu.count", r.OriginalRequest)
		}
		var page struct {
			Results []resource `json:"results"`
		}
		e.s.Do(t, "GET", "/api/v1/resources?catalog_item_instance_id=my-vm", nil).Want(t, http.StatusOK).JSON(t, &page)
		if len(page.Results) != 1 {
			t.Errorf("resources of my-vm = %d, want 1", len(page.Results))
		}

		e.report(t, o.InstanceID, "RUNNING")
		up := e.waitState(t, "my-vm", "up")
		if up.Status != "RUNNING" || up.Conditions[0].Status != "True" {
			t.Errorf("up order %+v", up)
		}
		if e.resource(t, o.InstanceID).Status != "RUNNING" {
			t.Errorf("resource status does not mirror the instance")
		}

		// The catalog item is in use while the order lives.
		e.s.Do(t, "DELETE", "/api/v1/catalog-items/small-fedora-vm", nil).WantProblem(t, http.StatusConflict, "CATALOG_ITEM_IN_USE")

		var del order
		e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/my-vm", nil).Want(t, http.StatusAccepted).JSON(t, &del)
		if del.State != "deleting" || del.DeletedAt == nil || del.Generation != 2 || del.Conditions[0].Reason != "Deleting" {
			t.Errorf("deleted %+v", del)
		}
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		e.waitState(t, "my-vm", "terminated")
		// Repeating the delete is harmless.
		e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/my-vm", nil).Want(t, http.StatusAccepted).JSON(t, &del)
		if del.State != "terminated" || len(e.p.Deletes()) != 1 {
			t.Errorf("second delete: %+v, %d provider deletes", del, len(e.p.Deletes()))
		}
		// Removed, it stays readable as a tombstone until it is purged.
		var tomb struct {
			State      string     `json:"state"`
			ExpireTime *time.Time `json:"expire_time"`
		}
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances/my-vm", nil).Want(t, http.StatusOK).JSON(t, &tomb)
		if tomb.State != "terminated" || tomb.ExpireTime == nil {
			t.Errorf("tombstone: %+v, want terminated with an expire_time", tomb)
		}
		e.s.Do(t, "GET", "/api/v1/resources/"+o.InstanceID, nil).WantProblem(t, http.StatusNotFound, "RESOURCE_NOT_FOUND")
		e.s.Do(t, "DELETE", "/api/v1/catalog-items/small-fedora-vm", nil).Want(t, http.StatusNoContent)
	})
}

func TestOrder_FailedRejectedInvalid(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)

		// The provider reports FAILED.
		var o order
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=fails", orderBody(2)).Want(t, http.StatusCreated).JSON(t, &o)
		e.p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
		e.report(t, o.InstanceID, "FAILED")
		if f := e.waitState(t, "fails", "failed"); f.Conditions[0].Reason != "Failed" {
			t.Errorf("failed order %+v", f)
		}

		// The provider refuses: the order fails, without retries.
		e.p.FailCreate(http.StatusUnprocessableEntity, `{"error":"no such image"}`)
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=refused", orderBody(2)).Want(t, http.StatusCreated).JSON(t, &o)
		e.waitState(t, "refused", "failed")
		e.p.SucceedCreates()

		// A value outside the item's rules is a 400 naming it.
		p := e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=bad", orderBody(9)).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if len(p.Fields) == 0 || p.Fields[0]["field"] != "user_values[0].value" {
			t.Errorf("problem fields %v, want user_values[0].value", p.Fields)
		}

		// A rejecting policy: 406, and nothing is recorded or provisioned.
		creates := len(e.p.Creates())
		e.policy(t, "nobig", "package steward.nobig\n\nmain := {\"rejected\": true, \"rejection_reason\": \"too big\"} if input.spec.vcpu.count > 3\n")
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=big", orderBody(4)).WantProblem(t, http.StatusNotAcceptable, "POLICY_REJECTED")
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances/big?show_deleted=true", nil).WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")
		var page struct {
			Results []resource `json:"results"`
		}
		e.s.Do(t, "GET", "/api/v1/resources?catalog_item_instance_id=big&show_deleted=true", nil).Want(t, http.StatusOK).JSON(t, &page)
		if len(page.Results) != 0 || len(e.p.Creates()) != creates {
			t.Errorf("rejected order left %d resources and %d provider creates", len(page.Results), len(e.p.Creates())-creates)
		}
		// Filters.
		var orders struct {
			Results []order `json:"results"`
		}
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances?state=failed&catalog_item_id=small-fedora-vm", nil).
			Want(t, http.StatusOK).JSON(t, &orders)
		if len(orders.Results) != 2 {
			t.Errorf("failed orders = %d, want 2", len(orders.Results))
		}
	})
}

func TestOrder_RetriedCreateNeverProvisionsTwice(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		var first, first2, replay order
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=once", orderBody(2)).Want(t, http.StatusCreated).JSON(t, &first)
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=once", orderBody(2)).WantProblem(t, http.StatusConflict, "ORDER_EXISTS")

		e.s.Do(t, "POST", "/api/v1/catalog-item-instances", orderBody(2), "Idempotency-Key", "k-1").
			Want(t, http.StatusCreated).JSON(t, &first2)
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances", orderBody(2), "Idempotency-Key", "k-1").
			Want(t, http.StatusCreated).JSON(t, &replay)
		if replay.ID != first2.ID || replay.InstanceID != first2.InstanceID {
			t.Errorf("replay %s/%s, first %s/%s", replay.ID, replay.InstanceID, first2.ID, first2.InstanceID)
		}
		e.p.WaitForCall(t, providertest.MethodCreate, first.InstanceID)
		e.p.WaitForCall(t, providertest.MethodCreate, first2.InstanceID)
		poll.Until(t, "both provisioned", func() bool {
			return e.order(t, "once").Status == "PROVISIONING" && e.order(t, first2.ID).Status == "PROVISIONING"
		})
		if n := len(e.p.Creates()); n != 2 {
			t.Errorf("provider got %d creates, want 2 (one per order)", n)
		}
	})
}

func TestOrder_ProviderDownAcrossRestart(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		// A policy places on vm-sp whatever its health, so the order is
		// accepted while the provider is down.
		e.policy(t, "pin", "package steward.pin\n\nmain := {\"selected_provider\": \"vm-sp\"}\n")
		e.p.GoDown()
		poll.Until(t, "vm-sp is unavailable", func() bool {
			var p struct {
				Status string `json:"status"`
			}
			e.s.Do(t, "GET", "/api/v1/providers/vm-sp", nil).Want(t, http.StatusOK).JSON(t, &p)
			return p.Status == "unavailable"
		})
		var o order
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=patient", orderBody(2)).Want(t, http.StatusCreated).JSON(t, &o)
		e.s = e.s.Restart(t)
		e.p.ComeBack()
		e.p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
		poll.Until(t, "the order is provisioning", func() bool { return e.order(t, "patient").Status == "PROVISIONING" })
		e.report(t, o.InstanceID, "RUNNING")
		e.waitState(t, "patient", "up")
		if n := len(e.p.Creates()); n != 1 {
			t.Errorf("provider got %d creates, want 1", n)
		}
	})
}

// A create whose answer is lost (the provider took it, then the call timed
// out) leaves its outcome UNKNOWN; the provision job's next attempt must
// resolve it with the provider and carry the order on, not take UNKNOWN
// for an answered create and end. Found by killing the real postgres
// provider during creates: every order stayed creating until the stalled
// sweep failed it.
func TestOrder_ACreateOfUnknownOutcomeIsResumed(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.p.BlockCreates()
		var o order
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=lost", orderBody(2)).Want(t, http.StatusCreated).JSON(t, &o)
		e.p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
		poll.Until(t, "the create's outcome is unknown", func() bool {
			var in struct{ Status string }
			e.s.Do(t, "GET", "/api/v1/service-type-instances/"+o.InstanceID, nil).Want(t, http.StatusOK).JSON(t, &in)
			return in.Status == "UNKNOWN"
		})
		e.p.UnblockCreates()
		poll.Until(t, "the next attempt resolves the create", func() bool { return e.order(t, "lost").Status == "PROVISIONING" })
		e.report(t, o.InstanceID, "RUNNING")
		e.waitState(t, "lost", "up")
	})
}
