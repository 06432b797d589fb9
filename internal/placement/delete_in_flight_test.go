package placement_test

import (
	"net/http"
	"testing"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// An order deleted while its provider is still making its instance: the
// provider answers the delete 404 (it holds nothing yet), then makes the
// instance and answers the create. What it made is deleted all the same;
// nothing is left on the provider that Steward has forgotten.
func TestOrder_DeletedWhileItsCreateIsInFlightLeavesNothing(t *testing.T) {
	t.Parallel()
	t.Run("answered", func(t *testing.T) { deletedWhileCreating(t, false) })
	// The cluster trial's case: the provider reports the instance RUNNING
	// before its create's answer is recorded, so the instance's status no
	// longer says its deletion went ahead; its delete time still does.
	t.Run("reported running first", func(t *testing.T) { deletedWhileCreating(t, true) })
}

func deletedWhileCreating(t *testing.T, reportFirst bool) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.p.BlockCreates()
		t.Cleanup(e.p.UnblockCreates)
		var o order
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=brief", orderBody(2)).Want(t, http.StatusCreated).JSON(t, &o)
		e.p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
		e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/brief", nil).Want(t, http.StatusAccepted)
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		if reportFirst {
			poll.Until(t, "the order ends", func() bool { return e.order(t, "brief").State == "terminated" })
			e.report(t, o.InstanceID, "RUNNING")
		}
		e.p.UnblockCreates()
		poll.Until(t, "the provider made the instance", func() bool { return e.p.Made(o.InstanceID) })
		poll.Until(t, "the provider holds it no more", func() bool {
			_, held := e.p.Instances()[o.InstanceID]
			return !held
		})
		if got := e.order(t, "brief"); got.DeletedAt == nil {
			t.Errorf("order %+v, want it deleted", got)
		}
	})
}
