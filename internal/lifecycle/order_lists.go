package lifecycle

import (
	"strings"

	"github.com/stewardhq/steward/internal/store"
)

// orderListKind is one of the eight order lists: one project's or every
// project's (an admin's, project "*"), oldest or newest first, tombstones
// with them or not.
type orderListKind struct {
	allProjects, newestFirst, live bool
}

// orderListQueries derives the eight order list queries from OrderList, the
// one written in SQL, so that they cannot drift apart: each kind differs
// from it in a term, and each term is rewritten where it stands. A
// rewrite that finds nothing to rewrite panics, at New: the SQL changed
// under it. The plan tests walk all eight.
func orderListQueries(engine store.Engine, list string) map[orderListKind]string {
	queries := make(map[orderListKind]string, 8)
	for _, all := range []bool{false, true} {
		for _, newest := range []bool{false, true} {
			for _, live := range []bool{false, true} {
				q := list
				if all {
					q = rewriteOnce(q, projectFilter[engine], allProjectsFilter[engine])
				}
				if newest {
					q = rewriteOnce(q, "(o.create_time, o.id) > (", "(o.create_time, o.id) < (")
					q = rewriteOnce(q, "ORDER BY o.create_time, o.id", "ORDER BY o.create_time DESC, o.id DESC")
				}
				if live {
					q = rewriteOnce(q, tombstoneFilter[engine], liveFilter[engine])
				}
				queries[orderListKind{allProjects: all, newestFirst: newest, live: live}] = q
			}
		}
	}
	return queries
}

// The terms orderListQueries rewrites, by engine. tombstoneFilter is the
// order lists' test that keeps tombstones only when show_deleted asks for
// them; liveFilter the same test as a plain term, implied by the WHERE
// clause, which lets the planner walk the partial index of live orders (a
// bound show_deleted cannot be proved false; issue 46: the first page
// walked every tombstone before the first live order). projectFilter
// walks the (project, create_time, id) index; allProjectsFilter, the
// same argument tested against "*" alone, the (create_time, id) one (an
// OR of the two made either scan and sort the whole table). Each
// replacement keeps its argument, for the list's arguments to stay the
// same.
var (
	tombstoneFilter = map[store.Engine]string{store.SQLite: "AND (? OR o.expire_time IS NULL)",
		store.Postgres: "AND ($11::boolean OR o.expire_time IS NULL)"}
	liveFilter = map[store.Engine]string{store.SQLite: "AND NOT ? AND o.expire_time IS NULL",
		store.Postgres: "AND NOT $11::boolean AND o.expire_time IS NULL"}
	projectFilter = map[store.Engine]string{store.SQLite: "WHERE o.project = ?1 -- on the (project, create_time, id) index",
		store.Postgres: "WHERE o.project = $1 -- on the (project, create_time, id) index"}
	allProjectsFilter = map[store.Engine]string{store.SQLite: "WHERE ?1 = '*' -- every project's, on the (create_time, id) index",
		store.Postgres: "WHERE $1::text = '*' -- every project's, on the (create_time, id) index"}
)

// rewriteOnce replaces the one term old of query with new.
func rewriteOnce(query, old, new string) string {
	if strings.Count(query, old) != 1 {
		panic("lifecycle: the order list query has not exactly one " + old)
	}
	return strings.Replace(query, old, new, 1)
}
