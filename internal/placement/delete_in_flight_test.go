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
