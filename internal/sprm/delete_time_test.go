package sprm_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// delete_time is when the deletion was requested: set by the accepted
// DELETE while the instance is still DELETING (deleted_at, the deprecated
// "deletion completed", still null), kept by a second DELETE, by the
// deletion's completion and across a restart.
func TestDeleteTime_SetWhenTheDeleteIsAccepted(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.p.SlowDeletes()
		if in := e.create(t, "vm-1"); in.DeleteTime != nil {
			t.Fatalf("a new instance has delete_time %v", in.DeleteTime)
		}
		before := time.Now().Add(-time.Second)
		var in instance
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/vm-1", nil).Want(t, http.StatusAccepted).JSON(t, &in)
		if in.Status != "DELETING" || in.DeleteTime == nil || in.DeleteTime.Before(before) || in.DeletedAt != nil {
			t.Fatalf("accepted delete answered status %s, delete_time %v, deleted_at %v; "+
				"want DELETING with delete_time set and deleted_at null", in.Status, in.DeleteTime, in.DeletedAt)
		}
		requested := *in.DeleteTime

		var again instance
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/vm-1", nil).Want(t, http.StatusAccepted).JSON(t, &again)
		if again.DeleteTime == nil || !again.DeleteTime.Equal(requested) {
			t.Fatalf("second delete moved delete_time from %v to %v", requested, again.DeleteTime)
		}

		e.s.ReportStatus(t, "vm-1", "DELETED")
		done := e.instance(t, "vm-1")
		if done.DeleteTime == nil || !done.DeleteTime.Equal(requested) || done.DeletedAt == nil || done.DeletedAt.Before(requested) {
			t.Fatalf("deleted: delete_time %v, deleted_at %v; want delete_time %v and deleted_at after it",
				done.DeleteTime, done.DeletedAt, requested)
		}

		e.s = e.s.Restart(t)
		if got := e.instance(t, "vm-1"); got.DeleteTime == nil || !got.DeleteTime.Equal(requested) {
			t.Fatalf("after a restart delete_time is %v, want %v", got.DeleteTime, requested)
		}
	})
}
