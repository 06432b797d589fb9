package lifecycle

import (
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/auth"
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
		deep := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		for kind, query := range orderListQueries(engine, newQueries(engine).orderList) {
			name, project := "a project's list", "default"
			if kind.allProjects {
				name, project = "every project's list", auth.AllProjects
			}
			if kind.newestFirst {
				name += ", newest first"
			}
			if kind.live {
				name += ", live orders"
			}
			first, _ := store.PageRequest{Backward: kind.newestFirst}.Keyset()
			for page, after := range map[string]time.Time{"first page": first, "deep page": deep} {
				plan := storetest.QueryPlan(t, db, query, project, "", "", "", "", "", "", "", "",
					store.JSON(map[string]string{}), !kind.live, after, "o-900000", 100)
				storetest.WantNoScan(t, name+", "+page, plan, "catalog_item_instances", "service_type_instances")
				// Issue 46: a list of live orders walks the index of live
				// orders, never over the tombstones that fill the front of a
				// list whose oldest orders were removed.
				index := map[bool]string{false: "catalog_item_instances_live_project_create_time",
					true: "catalog_item_instances_live_create_time"}[kind.allProjects]
				if engine == store.Postgres {
					// PostgreSQL costs the two alike on an empty table: either
					// keeps the tombstones out.
					index = "catalog_item_instances_live_"
				}
				if kind.live && !strings.Contains(plan, index) {
					t.Errorf("%s, %s does not read through %s:\n%s", name, page, index, plan)
				}
			}
		}
	})
}
