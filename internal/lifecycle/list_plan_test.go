package lifecycle

import (
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A page of orders costs what it returns, at the first page and deep in
// the list, for a project and for every project (issue 27): each query
// walks its index from the page token and neither scans nor sorts; each
// order's instance is joined through its key.
func TestOrderList_PagesWalkAnIndex(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		q := newQueries(engine)
		deep := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		for name, query := range map[string]string{"a project's list": q.orderList, "every project's list": q.orderListAllProjects} {
			project := "default"
			if query == q.orderListAllProjects {
				project = "*"
			}
			for page, after := range map[string]time.Time{"first page": {}, "deep page": deep} {
				plan := storetest.QueryPlan(t, db, query, project, "", "", "", "", "", "", "", "",
					store.JSON(map[string]string{}), false, after, "o-900000", 100)
				storetest.WantNoScan(t, name+", "+page, plan, "catalog_item_instances", "service_type_instances")
			}
		}
	})
}
