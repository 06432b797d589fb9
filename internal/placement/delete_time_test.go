package placement_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// A resource's delete_time is when its deletion was requested (its order's
// DELETE here), the same as its deprecated deleted_at; neither moves when
// the deletion completes or the order is deleted again.
func TestResourceDeleteTime_SetWhenTheOrderDeleteIsAccepted(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.p.SlowDeletes()
		var o order
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=my-vm", orderBody(2)).Want(t, http.StatusCreated).JSON(t, &o)
		e.p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
		e.report(t, o.InstanceID, "RUNNING")
		e.waitState(t, "my-vm", "up")
		if r := e.resource(t, o.InstanceID); r.DeleteTime != nil {
			t.Fatalf("a live resource has delete_time %v", r.DeleteTime)
		}

		before := time.Now().Add(-time.Second)
		e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/my-vm", nil).Want(t, http.StatusAccepted)
		r := e.resource(t, o.InstanceID)
		if r.DeleteTime == nil || r.DeleteTime.Before(before) || r.DeletedAt == nil || !r.DeletedAt.Equal(*r.DeleteTime) {
			t.Fatalf("resource after the order's delete: delete_time %v, deleted_at %v; want both set, equal",
				r.DeleteTime, r.DeletedAt)
		}
		requested := *r.DeleteTime

		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		e.report(t, o.InstanceID, "DELETED")
		e.waitState(t, "my-vm", "terminated")
		e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/my-vm", nil).Want(t, http.StatusAccepted)
		if r := e.resource(t, o.InstanceID); r.Status != "DELETED" || r.DeleteTime == nil || !r.DeleteTime.Equal(requested) {
			t.Fatalf("deleted resource: status %s, delete_time %v; want DELETED, delete_time %v", r.Status, r.DeleteTime, requested)
		}
	})
}
