package lifecycle

import (
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
	})
}
