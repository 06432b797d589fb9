package placement_test

import (
	"net/http"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A policy patch that leaves a spec its service type refuses fails the
// order at once with 409, instead of being acknowledged and failing later
// at the provider.
func TestOrder_PolicyPatchBreakingTheSchemaIsAConflict(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		creates := len(e.p.Creates())
		// vm metadata requires a name once metadata is present.
		e.policy(t, "labeller", "package steward.labeller\n\nmain := {\"patch\": {\"metadata\": {\"labels\": {\"team\": \"a\"}}}}\n")
		p := e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=broken", orderBody(2)).
			WantProblem(t, http.StatusConflict, "POLICY_CONFLICT")
		if len(p.Fields) == 0 || p.Fields[0]["field"] != "spec.metadata.name" {
			t.Errorf("problem fields %v, want spec.metadata.name", p.Fields)
		}
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances/broken?show_deleted=true", nil).
			WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")
		if got := len(e.p.Creates()); got != creates {
			t.Errorf("the provider got %d creates for a refused order", got-creates)
		}
	})
}
