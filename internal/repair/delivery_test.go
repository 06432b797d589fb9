package repair_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// Restart is refused for kubernetes runtimes with the seed's suggested
// actions, and is an operation like a repair for simple ones.
func TestRestart_OnlyForSimpleRuntimes(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.order(t, "rke2", "c1")
		e.order(t, "proc-app", "a1")
		p := e.as(t, root, "POST", appPath("c1")+"/restart", nil).WantProblem(t, http.StatusConflict, "RESTART_NOT_SUPPORTED")
		if got, _ := p.Extra["suggested_actions"].([]any); !slices.Equal(got, []any{"repair", "reconcile"}) {
			t.Errorf("suggested_actions = %v, want [repair reconcile]", p.Extra["suggested_actions"])
		}
		var app appInstance
		e.as(t, root, "GET", appPath("c1"), nil).Want(t, http.StatusOK).JSON(t, &app)
		if slices.Contains(app.SuggestedActions, "restart") || app.Runtime.Kind != "kubernetes" {
			t.Errorf("kubernetes app instance offers %v (runtime %s)", app.SuggestedActions, app.Runtime.Kind)
		}

		op := started(t, e.as(t, root, "POST", appPath("a1")+"/restart", nil))
		if op.Action != "restart" || op.Scope != "whole_runtime" {
			t.Errorf("restart operation = %+v", op)
		}
		if req := e.delivered(t, op); req.Action != "restart" {
			t.Errorf("delivered action %q, want restart", req.Action)
		}
		e.as(t, root, "POST", appPath("a1")+"/restart", nil).WantProblem(t, http.StatusConflict, "REPAIR_IN_PROGRESS")
	})
}

// A provider that refuses the operation fails it with a deterministic code
// (the app instance's slot is free again); a provider that did not register
// the repair operation is refused up front.
func TestRepair_DeliveryOutcomes(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.order(t, "proc-app", "a1")
		e.p.FailRepairs(http.StatusUnprocessableEntity)
		op := started(t, e.repair(t, "a1", map[string]any{"action": "reconcile", "scope": "whole_runtime"}))
		var got operation
		poll.Until(t, "refused operation failed", func() bool {
			e.as(t, root, "GET", appPath("a1")+"/repair-operations/"+op.ID, nil).Want(t, http.StatusOK).JSON(t, &got)
			return got.Status == "failed"
		})
		if got.Error == nil || got.Error.Code != "PROVIDER_REFUSED" || got.NextSafeAction != "retry" {
			t.Errorf("refused operation = %+v", got)
		}
		for _, st := range got.Steps {
			if st.Status != "skipped" {
				t.Errorf("step %s of a refused operation is %s, want skipped", st.Name, st.Status)
			}
		}
		e.p.FailRepairs(0)
		e.finish(t, "a1", started(t, e.repair(t, "a1", map[string]any{"action": "reconcile", "scope": "whole_runtime"})))

		plain := providertest.New(t)
		e.as(t, root, "POST", "/api/v1/providers", plain.Registration("plain-sp", "plain-app")).Want(t, http.StatusCreated)
		e.as(t, root, "POST", "/api/v1/service-types?id=plain-app", map[string]any{"schema": map[string]any{"type": "object"},
			"runtime": map[string]any{"kind": "simple", "members": true}}).Want(t, http.StatusCreated)
		e.as(t, root, "POST", "/api/v1/catalog-items?id=plain-app", map[string]any{"service_type": "plain-app"}).
			Want(t, http.StatusCreated)
		e.as(t, root, "POST", "/api/v1/catalog-item-instances?id=p1", map[string]any{"catalog_item_id": "plain-app"}).
			Want(t, http.StatusCreated)
		poll.Until(t, "p1 placed", func() bool { return len(plain.Instances()) == 1 })
		e.repair(t, "p1", map[string]any{"action": "reconcile", "scope": "whole_runtime"}).
			WantProblem(t, http.StatusConflict, "REPAIR_NOT_SUPPORTED")
	})
}

// Only the provider an app instance is placed on reports its runtime; an
// older report than the one kept changes nothing (204).
func TestRuntimeReport_OwnedAndOrdered(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.order(t, "rke2", "c1")
		mine := e.token(t, map[string]any{"name": "k8s-sp", "role": "service_account", "provider": "k8s-sp", "service_types": []string{"*"}})
		theirs := e.token(t, map[string]any{"name": "other-sp", "role": "service_account", "provider": "other-sp", "service_types": []string{"*"}})
		user := e.token(t, map[string]any{"name": "ann", "role": "user", "project": "default"})
		now := time.Now().UTC()
		report := func(token string, at time.Time, health string) *apitest.Response {
			return e.as(t, token, "PUT", appPath("c1")+"/runtime", map[string]any{"health": health,
				"observed_time": at.Format(time.RFC3339Nano), "members": members("server-0", "server")})
		}
		report(theirs, now, "healthy").WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		report(user, now, "healthy").WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
		report(mine, now, "sick").WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		report(mine, now, "degraded").Want(t, http.StatusOK)
		report(mine, now.Add(-time.Minute), "healthy").Want(t, http.StatusNoContent)
		var app appInstance
		e.as(t, user, "GET", appPath("c1"), nil).Want(t, http.StatusOK).JSON(t, &app)
		if app.RuntimeState == nil || app.RuntimeState.Health != provider.RuntimeDegraded ||
			len(app.RuntimeState.Members) != 1 || !app.RuntimeState.ObservedTime.Equal(now.Truncate(time.Microsecond)) {
			t.Errorf("runtime after a stale report = %+v", app.RuntimeState)
		}
	})
}
