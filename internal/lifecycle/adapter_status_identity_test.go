package lifecycle_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 22, item 9: the order id parameter takes the identity form
// (<service_type>.<attribute>=<value>) on the adapter-statuses routes too,
// as on every other order route: a report PUT by identity is listed by id
// and by identity; an identity that names no order is 404.
func TestAdapterStatuses_TakeTheIdentityForm(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s, _ := gatedEnv(t, engine)
		orderCache(t, s, "sessions", "small")
		byIdentity := "/api/v1/catalog-item-instances/cache.name=sessions/adapter-statuses"
		s.Do(t, "PUT", byIdentity+"/dns", adapterReport(1, time.Now(), "True", "True")).Want(t, http.StatusOK)
		for _, path := range []string{byIdentity, "/api/v1/catalog-item-instances/sessions/adapter-statuses"} {
			var page struct {
				Results []struct{ Adapter string }
			}
			s.Do(t, "GET", path, nil).Want(t, http.StatusOK).JSON(t, &page)
			if len(page.Results) != 1 || page.Results[0].Adapter != "dns" {
				t.Errorf("GET %s: %+v, want the dns report", path, page.Results)
			}
		}
		missing := "/api/v1/catalog-item-instances/cache.name=nobody/adapter-statuses"
		s.Do(t, "GET", missing, nil).WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")
		s.Do(t, "PUT", missing+"/dns", adapterReport(1, time.Now(), "True", "True")).
			WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")
	})
}
