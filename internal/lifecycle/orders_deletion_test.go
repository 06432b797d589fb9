package lifecycle_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// adapterReport is an adapter status report body; extra conditions (such
// as Finalized) are appended.
func adapterReport(gen int64, at time.Time, applied, health string, extra ...map[string]any) map[string]any {
	conds := []map[string]any{
		{"type": "Applied", "status": applied},
		{"type": "Available", "status": "False"},
		{"type": "Health", "status": health},
	}
	return map[string]any{"observed_generation": gen, "observed_time": at.UTC().Format(time.RFC3339Nano),
		"conditions": append(conds, extra...)}
}

func (e *orders) putReport(t testing.TB, id, adapter string, body map[string]any, want int) {
	t.Helper()
	e.s.Do(t, "PUT", "/api/v1/catalog-item-instances/"+id+"/adapter-statuses/"+adapter, body).Want(t, want)
}

// readyMessage is the Ready condition's message.
func readyMessage(o order) string {
	var msg string
	for _, c := range o.Conditions {
		if c.Type == "Ready" {
			msg = c.Message
		}
	}
	return msg
}

// The deletion gate (DESIGN §4): an order whose resource is gone is removed
// only once every adapter that ever reported on it confirms, at the
// deletion's generation and after the deletion, that it cleaned up; a
// report from before the delete never counts, Health=False holds it with
// the adapter's reason, and Finalized=True passes alone.
func TestDeletion_WaitsForEveryAdapterThatReported(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		o := e.up(t, "web", 2)
		e.putReport(t, "web", "k8s", adapterReport(1, time.Now(), "True", "True"), http.StatusOK)
		e.putReport(t, "web", "dns", adapterReport(1, time.Now(), "True", "True"), http.StatusOK)

		e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusAccepted)
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		var held order
		poll.Until(t, "the resource is gone and the order waits at the gate", func() bool {
			held = e.get(t, "web")
			return held.Status == "DELETED"
		})
		if msg := readyMessage(held); held.State != "deleting" || held.Generation != 2 ||
			!strings.Contains(msg, "adapter k8s") || !strings.Contains(msg, "adapter dns") {
			t.Fatalf("waiting at the gate: state %s, generation %d, Ready message %q; want deleting, 2, naming k8s and dns",
				held.State, held.Generation, msg)
		}

		// Applied=False and Health=True after the delete, but of the
		// generation before it: discarded, the order still waits.
		e.putReport(t, "web", "k8s", adapterReport(1, time.Now(), "False", "True"), http.StatusNoContent)
		// Of the deletion's generation, but observed before the deletion
		// (an adapter whose clock is behind): stored, and it does not count.
		// The gate is checked by the order's reconcile, after the report
		// commits: wait for the message to change.
		e.putReport(t, "web", "k8s", adapterReport(2, held.DeletedAt.Add(-time.Second), "False", "True"), http.StatusOK)
		poll.Until(t, "the gate names the confirmation observed before the deletion", func() bool {
			got := e.get(t, "web")
			if got.State != "deleting" {
				t.Fatalf("a confirmation observed before the deletion counted: state %s, Ready message %q", got.State, readyMessage(got))
			}
			return strings.Contains(readyMessage(got), "adapter k8s to report an observation made after the deletion")
		})
		e.putReport(t, "web", "k8s", adapterReport(2, time.Now(), "False", "True"), http.StatusOK)
		unhealthy := adapterReport(2, time.Now(), "True", "False")
		unhealthy["conditions"].([]map[string]any)[2]["reason"] = "FinalizerStuck"
		e.putReport(t, "web", "dns", unhealthy, http.StatusOK)
		poll.Until(t, "the gate names dns's FinalizerStuck only", func() bool {
			held = e.get(t, "web")
			if held.State != "deleting" {
				t.Fatalf("after k8s confirmed and dns failed: state %s, Ready message %q; want deleting",
					held.State, readyMessage(held))
			}
			msg := readyMessage(held)
			return !strings.Contains(msg, "adapter k8s") && strings.Contains(msg, "dns") && strings.Contains(msg, "FinalizerStuck")
		})

		e.putReport(t, "web", "dns", adapterReport(2, time.Now(), "True", "False",
			map[string]any{"type": "Finalized", "status": "True"}), http.StatusOK)
		e.waitState(t, "web", "terminated")
		evs := e.events(t, "web")
		if last := evs[len(evs)-1]; last.From != "deleting" || last.To != "terminated" || last.Trigger != "resource" {
			t.Errorf("last event %+v, want deleting>terminated by resource", last)
		}
	})
}

// The sweep removes an order whose gate opened without its check running
// (here, a confirming report written behind the API's back).
func TestDeletion_SweepFinishesWhatTheChecksMissed(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		o := e.up(t, "web", 2)
		e.putReport(t, "web", "k8s", adapterReport(1, time.Now(), "True", "True"), http.StatusOK)
		e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusAccepted)
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		poll.Until(t, "the order waits at the gate", func() bool { return e.get(t, "web").Status == "DELETED" })

		now := time.Now().UTC()
		query := `UPDATE order_adapter_statuses SET observed_generation = 2, observed_time = $1, conditions = $2
			WHERE order_id = 'web' AND adapter = 'k8s'`
		if engine == store.SQLite {
			query = strings.NewReplacer("$1", "?", "$2", "?").Replace(query)
		}
		if _, err := e.s.DB().Exec(t.Context(), query, now,
			store.JSON(adapterReport(2, now, "False", "True")["conditions"])); err != nil {
			t.Fatal(err)
		}
		if got := e.get(t, "web"); got.State != "deleting" {
			t.Fatalf("state %s before the sweep, want deleting", got.State)
		}
		n, err := e.s.Lifecycle().SweepDeletions(t.Context())
		if err != nil || n != 1 {
			t.Fatalf("SweepDeletions = %d, %v; want 1 removed", n, err)
		}
		if got := e.get(t, "web"); got.State != "terminated" {
			t.Fatalf("state %s after the sweep, want terminated", got.State)
		}
	})
}

// A required adapter that never reported still holds the deletion (it may
// have done its work and failed to say so: the seed review's ACK-but-no-
// POST case) until it confirms its cleanup.
func TestDeletion_WaitsForRequiredAdaptersThatNeverReported(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		e.withType(t, "app", map[string]any{"required_adapters": []any{"dns"}})
		o := e.upOf(t, "shop", "app")

		e.deleteOrder(t, "shop")
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		var held order
		poll.Until(t, "the resource is gone", func() bool { held = e.get(t, "shop"); return held.Status == "DELETED" })
		if held.State != "deleting" || !strings.Contains(readyMessage(held), "adapter dns, required by service type app") {
			t.Fatalf("state %s, Ready message %q: want deleting, waiting for the required adapter dns",
				held.State, readyMessage(held))
		}
		e.putReport(t, "shop", "dns", adapterReport(2, time.Now(), "False", "True"), http.StatusOK)
		e.waitState(t, "shop", "terminated")
	})
}
