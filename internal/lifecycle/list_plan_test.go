package lifecycle

import (
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A page of orders costs what it returns, at the first page and deep in
// the list, for a project and for every project (issue 27), oldest first
// and newest first (issue 46, order_by=create_time desc): each query walks
// its index from the page token, forwards or backwards, and neither scans
// nor sorts; each order's instance is joined through its key.
func TestOrderList_PagesWalkAnIndex(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		q := newQueries(engine)
		deep := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		for _, list := range []struct {
			name, query, project string
			newest               bool
		}{
			{"a project's list", q.orderList, "default", false},
			{"every project's list", q.orderListAllProjects, "*", false},
			{"a project's list, newest first", q.orderListNewest, "default", true},
			{"every project's list, newest first", q.orderListAllProjectsNewest, "*", true},
		} {
			first, _ := store.PageRequest{Backward: list.newest}.Keyset()
			for page, after := range map[string]time.Time{"first page": first, "deep page": deep} {
				plan := storetest.QueryPlan(t, db, list.query, list.project, "", "", "", "", "", "", "", "",
					store.JSON(map[string]string{}), false, after, "o-900000", 100)
				storetest.WantNoScan(t, list.name+", "+page, plan, "catalog_item_instances", "service_type_instances")
			}
		}
		// Issue 46: a list of live orders walks the index of live orders,
		// never over the tombstones that fill the front of a list whose
		// oldest orders were removed.
		for query, index := range map[string]string{q.orderList: "catalog_item_instances_live_project_create_time",
			q.orderListAllProjects:       "catalog_item_instances_live_create_time",
			q.orderListNewest:            "catalog_item_instances_live_project_create_time",
			q.orderListAllProjectsNewest: "catalog_item_instances_live_create_time"} {
			project := "default"
			if query == q.orderListAllProjects || query == q.orderListAllProjectsNewest {
				project = "*"
			}
			plan := storetest.QueryPlan(t, db, liveOrders(engine, query), project, "", "", "", "", "", "", "", "",
				store.JSON(map[string]string{}), false, time.Time{}, "", 100)
			storetest.WantNoScan(t, "the live orders of "+project, plan, "catalog_item_instances", "service_type_instances")
			if engine == store.Postgres {
				// PostgreSQL costs the two alike on an empty table: either
				// keeps the tombstones out.
				index = "catalog_item_instances_live_"
			}
			if !strings.Contains(plan, index) {
				t.Errorf("the live orders of %s do not read through %s:\n%s", project, index, plan)
			}
		}
	})
}
