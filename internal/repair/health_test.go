package repair_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// condition is one condition of an order as the API shows it.
type condition struct{ Type, Status, Reason, Message string }

// healthy returns the order's Healthy condition as GET and the list show
// it; ok is false when it has none.
func (e env) healthy(t *testing.T, id string) (c condition, ok bool) {
	t.Helper()
	var o struct{ Conditions []condition }
	e.as(t, root, "GET", "/api/v1/catalog-item-instances/"+id, nil).Want(t, http.StatusOK).JSON(t, &o)
	var list struct {
		Results []struct {
			ID         string
			Conditions []condition
		}
	}
	e.as(t, root, "GET", "/api/v1/catalog-item-instances", nil).Want(t, http.StatusOK).JSON(t, &list)
	for _, listed := range list.Results {
		if listed.ID == id && len(listed.Conditions) != len(o.Conditions) {
			t.Errorf("order %s: listed with conditions %+v, read with %+v", id, listed.Conditions, o.Conditions)
		}
	}
	for _, c := range o.Conditions {
		if c.Type == "Healthy" {
			return c, true
		}
	}
	return condition{}, false
}

// The runtime's health is on the order as its Healthy condition, updated by
// every runtime report (a PUT, a repair operation's report); absent until
// one is reported (issue 22, item 3).
func TestRuntimeHealth_ShownOnTheOrder(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.order(t, "rke2", "c1")
		if c, ok := e.healthy(t, "c1"); ok {
			t.Errorf("before any runtime report the order has %+v, want no Healthy condition", c)
		}

		degraded := members("server-0", "server", "agent-0", "agent")
		degraded[1].Health, degraded[1].Message = provider.RuntimeFailed, "exited: killed"
		e.runtime(t, "c1", provider.RuntimeState{Health: provider.RuntimeDegraded, Members: degraded})
		c, ok := e.healthy(t, "c1")
		if !ok || c.Status != "False" || c.Reason != "Degraded" || !strings.Contains(c.Message, "agent-0") ||
			!strings.Contains(c.Message, "exited: killed") || strings.Contains(c.Message, "server-0 (server)") {
			t.Errorf("degraded runtime: Healthy = %+v (present %v), want False/Degraded naming agent-0 only", c, ok)
		}

		e.runtime(t, "c1", provider.RuntimeState{Health: provider.RuntimeHealthy, Members: members("server-0", "server", "agent-0", "agent")})
		if c, ok := e.healthy(t, "c1"); !ok || c.Status != "True" || c.Reason != "Healthy" {
			t.Errorf("healthy again: Healthy = %+v (present %v), want True/Healthy", c, ok)
		}

		// A repair operation's report carries the runtime too.
		op := started(t, e.repair(t, "c1", map[string]any{"action": "reconcile", "scope": "whole_runtime"}))
		failed := members("server-0", "server")
		failed[0].Health = provider.RuntimeFailed
		e.as(t, root, "POST", appPath("c1")+"/repair-operations/"+op.ID+"/report", map[string]any{
			"status": "failed", "error": map[string]any{"code": "SERVER_LOST", "message": "server-0 is gone"},
			"runtime_state": provider.RuntimeState{Health: provider.RuntimeFailed, Members: failed},
		}).Want(t, http.StatusOK)
		if c, ok := e.healthy(t, "c1"); !ok || c.Status != "False" || c.Reason != "Failed" || !strings.Contains(c.Message, "server-0") {
			t.Errorf("after a repair report of a failed runtime: Healthy = %+v (present %v), want False/Failed naming server-0", c, ok)
		}
	})
}
