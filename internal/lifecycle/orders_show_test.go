package lifecycle_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// A GET reads an order for its view only (attribute sets, labels and
// values passed through as stored; the instance's outputs joined), while a
// write's answer shows the order the engine decoded, with the outputs read
// apart. Both show an order that is up, with outputs, the same way: the
// Ready condition from the active set, the outputs, every attribute set.
// The outputs come only with the create's answer, which may be recorded
// after the report that took the order up: they are kept all the same.
func TestOrders_GetShowsAnUpOrderAsAWriteAnswersIt(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		e.p.SetOutputs(provider.Outputs{"ip": "10.0.0.7", "port": 443.0, "public": true})
		e.up(t, "shown", 3)
		// The report (up) may land before the create's answer, which
		// brings the outputs.
		poll.Until(t, "the outputs are shown", func() bool {
			var o map[string]any
			e.s.Do(t, "GET", "/api/v1/catalog-item-instances/shown", nil).Want(t, http.StatusOK).JSON(t, &o)
			out, _ := o["outputs"].(map[string]any)
			return out["ip"] == "10.0.0.7"
		})
		answer := e.s.Do(t, "PATCH", "/api/v1/catalog-item-instances/shown",
			map[string]any{"labels": map[string]string{"team": "db"}}).Want(t, http.StatusOK)
		read := e.s.Do(t, "GET", "/api/v1/catalog-item-instances/shown", nil).Want(t, http.StatusOK)
		var answered, got map[string]any
		if err := json.Unmarshal(answer.Body, &answered); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(read.Body, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(answered, got); diff != "" {
			t.Errorf("a GET differs from the PATCH's answer (-answer +get):\n%s", diff)
		}
		conds, _ := got["conditions"].([]any)
		if len(conds) == 0 || conds[0].(map[string]any)["status"] != "True" {
			t.Errorf("conditions %v, want Ready True first", got["conditions"])
		}
		if out, _ := got["outputs"].(map[string]any); out["ip"] != "10.0.0.7" {
			t.Errorf("outputs %v, want the provider's", got["outputs"])
		}
		if attrs, _ := got["attributes"].(map[string]any); attrs["active"] == nil {
			t.Errorf("attributes %v, want an active set", got["attributes"])
		}
	})
}
