package lifecycle_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// A create is answered with the order it wrote, not read back: the answer
// is what a GET of the order shows until something changes it (here the
// provider holds the create, so nothing does), labels and values left out
// included. A second create under the id is 409 ORDER_EXISTS, found by the
// insert rather than a read before it.
func TestOrders_CreateAnswersTheOrderAsAGetShowsIt(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		e.p.BlockCreates()
		t.Cleanup(e.p.UnblockCreates)
		for id, body := range map[string]map[string]any{
			"bare": {"catalog_item_id": "small-vm"},
			"full": {"catalog_item_id": "small-vm", "display_name": "web", "labels": map[string]string{"env": "dev"},
				"user_values": []any{map[string]any{"path": "vcpu.count", "value": 3}}},
		} {
			created := e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, body).Want(t, http.StatusCreated)
			var o order
			created.JSON(t, &o)
			e.p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
			read := e.s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id, nil).Want(t, http.StatusOK)
			var answered, got map[string]any
			if err := json.Unmarshal(created.Body, &answered); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(read.Body, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, answered); diff != "" {
				t.Errorf("%s: the create's answer differs from a GET (-get +answer):\n%s", id, diff)
			}
			if created.Header.Get("ETag") != read.Header.Get("ETag") {
				t.Errorf("%s: ETag %q answered, %q read", id, created.Header.Get("ETag"), read.Header.Get("ETag"))
			}
			e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, body).WantProblem(t, http.StatusConflict, "ORDER_EXISTS")
		}
	})
}
