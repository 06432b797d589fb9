package repair_test

import (
	"net/http"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A repair worker's token reads its operation and the operation's target,
// nothing else of the project, and stops working when the operation ends
// (it lived out a 24-hour TTL before).
func TestRepair_WorkerTokenReadsItsTargetAndEndsWithItsOperation(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.order(t, "proc-app", "c1")
		e.order(t, "proc-app", "c2")
		op := started(t, e.repair(t, "c1", map[string]any{"action": "reconcile", "scope": "whole_runtime"}))
		other := started(t, e.repair(t, "c2", map[string]any{"action": "reconcile", "scope": "whole_runtime"}))
		worker := e.delivered(t, op).Token

		e.as(t, worker, "GET", appPath("c1")+"/repair-operations/"+op.ID, nil).Want(t, http.StatusOK)
		e.as(t, worker, "GET", appPath("c1"), nil).Want(t, http.StatusOK)
		e.as(t, worker, "GET", appPath("c2"), nil).WantProblem(t, http.StatusNotFound, "APP_INSTANCE_NOT_FOUND")
		for _, path := range []string{appPath("c2") + "/repair-operations/" + other.ID, appPath("c1") + "/repair-operations",
			"/api/v1/catalog-item-instances", "/api/v1/catalog-item-instances/c1", "/api/v1/resources",
			"/api/v1/service-type-instances", "/api/v1/operations"} {
			e.as(t, worker, "GET", path, nil).WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		}

		e.as(t, worker, "POST", appPath("c1")+"/repair-operations/"+op.ID+"/report",
			map[string]any{"status": "succeeded"}).Want(t, http.StatusOK)
		e.as(t, worker, "GET", "/api/v1/whoami", nil).WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")
		// The other operation's worker is untouched.
		e.as(t, e.delivered(t, other).Token, "GET", "/api/v1/whoami", nil).Want(t, http.StatusOK)
	})
}
