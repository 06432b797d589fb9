package lifecycle_test

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// An order shows its current instance's outputs (issue 24), on a read and
// in a list: {} before the provider gave any, a report's once it did, and
// a new instance's once a rehydration moved the order onto it.
func TestOrder_ShowsItsCurrentInstancesOutputs(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		type withOutputs struct {
			InstanceID string         `json:"instance_id"`
			Outputs    map[string]any `json:"outputs"`
		}
		read := func() withOutputs {
			t.Helper()
			var o withOutputs
			e.s.Do(t, "GET", "/api/v1/catalog-item-instances/db", nil).Want(t, http.StatusOK).JSON(t, &o)
			return o
		}
		listed := func() map[string]any {
			t.Helper()
			var page struct {
				Results []struct {
					ID string `json:"id"`
					withOutputs
				} `json:"results"`
			}
			e.s.Do(t, "GET", "/api/v1/catalog-item-instances", nil).Want(t, http.StatusOK).JSON(t, &page)
			for _, o := range page.Results {
				if o.ID == "db" {
					return o.Outputs
				}
			}
			t.Fatal("order db is not listed")
			return nil
		}

		o := e.up(t, "db", 2)
		other := e.up(t, "other", 2) // a list shows each order its own instance's
		if got := read().Outputs; got == nil || len(got) != 0 {
			t.Errorf("before any outputs: %v, want {}", got)
		}
		e.s.Do(t, "PUT", "/api/v1/service-type-instances/"+o.InstanceID+"/status", map[string]any{
			"status": "RUNNING", "observed_time": time.Now().UTC().Format(time.RFC3339Nano),
			"outputs": map[string]any{"host": "old.example", "port": 5432},
		}).Want(t, http.StatusOK)
		want := map[string]any{"host": "old.example", "port": 5432.0}
		if got := read().Outputs; !reflect.DeepEqual(got, want) {
			t.Errorf("after a report: order shows %v, want %v", got, want)
		}
		if got := listed(); !reflect.DeepEqual(got, want) {
			t.Errorf("after a report: listed order shows %v, want %v", got, want)
		}
		var patched withOutputs // an answer to a write shows them too
		e.s.Do(t, "PATCH", "/api/v1/catalog-item-instances/db", map[string]any{"labels": map[string]any{"tier": "gold"}}).
			Want(t, http.StatusOK).JSON(t, &patched)
		if !reflect.DeepEqual(patched.Outputs, want) {
			t.Errorf("the answer to a PATCH shows %v, want %v", patched.Outputs, want)
		}

		e.p.SetOutputs(provider.Outputs{"host": "new.example", "port": 6432})
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances/db:rehydrate", nil).Want(t, http.StatusAccepted)
		// The order moves to the new instance once it runs.
		e.report(t, e.newCreate(t, o.InstanceID, other.InstanceID), "RUNNING")
		var now withOutputs
		poll.Until(t, "the order is repointed to the rehydration's instance", func() bool {
			now = read()
			return now.InstanceID != o.InstanceID
		})
		if got, want := read().Outputs, map[string]any{"host": "new.example", "port": 6432.0}; !reflect.DeepEqual(got, want) {
			t.Errorf("after the rehydration: order shows %v, want the new instance's %v", got, want)
		}
	})
}
