package storetest

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/store"
)

// QueryPlan returns the plan db's engine chooses for query with args, one
// line per step: SQLite's EXPLAIN QUERY PLAN, or PostgreSQL's EXPLAIN with
// sequential scans, bitmap scans and sorts disabled, so that a plan that
// still scans a table or sorts is one that cannot walk an index in the
// order asked, however few rows a test's table holds (PostgreSQL plans by
// the table's size; at a million rows it takes the index a small table
// does without).
func QueryPlan(t testing.TB, db *store.DB, query string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	var lines []string
	err := db.InTx(ctx, func(tx *store.Tx) error {
		lines = lines[:0]
		explain := "EXPLAIN QUERY PLAN "
		if db.Engine() == store.Postgres {
			for _, off := range []string{"enable_seqscan", "enable_bitmapscan", "enable_sort"} {
				if _, err := tx.Exec(ctx, "SET LOCAL "+off+" = off"); err != nil {
					return err
				}
			}
			explain = "EXPLAIN "
		}
		rows, err := tx.Query(ctx, explain+query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if db.Engine() == store.Postgres {
				var line string
				if err := rows.Scan(&line); err != nil {
					return err
				}
				lines = append(lines, line)
				continue
			}
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				return err
			}
			lines = append(lines, detail)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	return strings.Join(lines, "\n")
}

// scan matches a step that reads a whole table: SQLite's "SCAN t" (with or
// without an index: a full index walk is a scan too), PostgreSQL's "Seq
// Scan on t".
var scan = regexp.MustCompile(`(?m)^\s*(?:->\s*)?(?:SCAN (\w+)|Seq Scan on (\w+))`)

// sorts matches a step that sorts what it read: SQLite's temporary B-tree
// for an ORDER BY, PostgreSQL's Sort node.
var sorts = regexp.MustCompile(`(?m)USE TEMP B-TREE FOR ORDER BY|^\s*(?:->\s*)?(?:Incremental )?Sort\s+\(`)

// WantNoScan fails t if plan (from [QueryPlan]) reads any of tables whole,
// or sorts, saying which: a query on a hot path must cost what it returns,
// not what is stored.
func WantNoScan(t testing.TB, name, plan string, tables ...string) {
	t.Helper()
	for _, m := range scan.FindAllStringSubmatch(plan, -1) {
		table := m[1] + m[2]
		for _, want := range tables {
			if table == want {
				t.Errorf("%s scans %s:\n%s", name, table, plan)
			}
		}
	}
	if sorts.MatchString(plan) {
		t.Errorf("%s sorts all it reads:\n%s", name, plan)
	}
}
