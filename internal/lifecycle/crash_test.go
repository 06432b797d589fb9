package lifecycle_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A create whose process died after its transaction committed but before
// its answer was recorded: the peers reaper released its Idempotency-Key,
// so the client's retry runs the handler again. It must answer with the
// order the first run made, not make a second one (nor 409 for ?id=).
func TestOrders_CreateRunAgainAfterItsProcessDiedAnswersTheSameOrder(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		body := map[string]any{"catalog_item_id": "small-vm"}
		for _, query := range []string{"", "?id=named"} {
			key := "create" + query
			var first, again order
			e.s.Do(t, "POST", "/api/v1/catalog-item-instances"+query, body, "Idempotency-Key", key).
				Want(t, http.StatusCreated).JSON(t, &first)
			if _, err := e.s.DB().Exec(context.Background(), "DELETE FROM idempotency_keys"); err != nil {
				t.Fatal(err)
			}
			res := e.s.Do(t, "POST", "/api/v1/catalog-item-instances"+query, body, "Idempotency-Key", key)
			res.Want(t, http.StatusCreated).JSON(t, &again)
			if again.ID != first.ID || again.InstanceID != first.InstanceID {
				t.Errorf("%q: run again = order %s (instance %s), want the first run's %s (%s)", query,
					again.ID, again.InstanceID, first.ID, first.InstanceID)
			}
			// Another key is another request: a new order (or 409 for the id).
			other := e.s.Do(t, "POST", "/api/v1/catalog-item-instances"+query, body, "Idempotency-Key", key+"-other")
			if query == "" {
				var o order
				other.Want(t, http.StatusCreated).JSON(t, &o)
				if o.ID == first.ID {
					t.Errorf("another key answered the first key's order %s", o.ID)
				}
			} else {
				other.WantProblem(t, http.StatusConflict, "ORDER_EXISTS")
			}
		}
		var list struct {
			Results []order `json:"results"`
		}
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances?max_page_size=100", nil).Want(t, http.StatusOK).JSON(t, &list)
		if n := len(list.Results); n != 3 {
			t.Errorf("%d orders, want 3 (two keys run twice made two, one other key one)", n)
		}
	})
}

// The same for a rehydration: run again under its key, it answers the
// operation the first run started instead of 409 or a second rehydration.
func TestOrders_RehydrateRunAgainAfterItsProcessDiedAnswersTheSameOperation(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		e.up(t, "web", 2)
		var first, again struct {
			ID string `json:"id"`
		}
		path := "/api/v1/catalog-item-instances/web:rehydrate"
		e.s.Do(t, "POST", path, nil, "Idempotency-Key", "rh").Want(t, http.StatusAccepted).JSON(t, &first)
		if _, err := e.s.DB().Exec(context.Background(), "DELETE FROM idempotency_keys"); err != nil {
			t.Fatal(err)
		}
		e.s.Do(t, "POST", path, nil, "Idempotency-Key", "rh").Want(t, http.StatusAccepted).JSON(t, &again)
		if first.ID == "" || again.ID != first.ID {
			t.Errorf("run again = operation %q, want the first run's %q", again.ID, first.ID)
		}
	})
}
