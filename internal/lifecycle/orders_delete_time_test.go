package lifecycle_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// An order's delete_time is when its DELETE was accepted, the same as its
// deprecated deleted_at, in the answer, the record and the list; a second
// DELETE and the deletion's end leave it where it was.
func TestDeletion_DeleteTimeIsWhenTheDeleteWasAccepted(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		e.p.SlowDeletes()
		if o := e.up(t, "web", 2); o.DeleteTime != nil {
			t.Fatalf("a live order has delete_time %v", o.DeleteTime)
		}

		before := time.Now().Add(-time.Second)
		del := e.deleteOrder(t, "web")
		if del.DeleteTime == nil || del.DeleteTime.Before(before) || del.DeletedAt == nil || !del.DeletedAt.Equal(*del.DeleteTime) {
			t.Fatalf("accepted delete: delete_time %v, deleted_at %v; want both set, equal", del.DeleteTime, del.DeletedAt)
		}
		requested := *del.DeleteTime
		if again := e.deleteOrder(t, "web"); again.DeleteTime == nil || !again.DeleteTime.Equal(requested) {
			t.Fatalf("second delete moved delete_time from %v to %v", requested, again.DeleteTime)
		}
		var page struct {
			Results []order `json:"results"`
		}
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances?show_deleted=true", nil).Want(t, http.StatusOK).JSON(t, &page)
		if len(page.Results) != 1 || page.Results[0].DeleteTime == nil || !page.Results[0].DeleteTime.Equal(requested) {
			t.Fatalf("listed: %+v, want web with delete_time %v", page.Results, requested)
		}

		e.p.WaitForCall(t, providertest.MethodDelete, del.InstanceID)
		e.report(t, del.InstanceID, "DELETED")
		gone := e.waitState(t, "web", "terminated")
		if gone.DeleteTime == nil || !gone.DeleteTime.Equal(requested) || gone.DeletedAt == nil || !gone.DeletedAt.Equal(requested) {
			t.Fatalf("terminated: delete_time %v, deleted_at %v; want both %v", gone.DeleteTime, gone.DeletedAt, requested)
		}
	})
}
