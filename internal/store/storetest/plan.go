package storetest

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
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
	plan, err := queryPlan(context.Background(), db, true, query, args)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// Plan is [QueryPlan] with sorts allowed (PostgreSQL then sorts a few rows
// found by an index rather than walk a whole index in order), for a caller
// that asks only what a statement reads whole ([ScannedTables]) and goes on
// after an error.
func Plan(ctx context.Context, db *store.DB, query string, args ...any) (string, error) {
	return queryPlan(ctx, db, false, query, args)
}

func queryPlan(ctx context.Context, db *store.DB, sortsOff bool, query string, args []any) (string, error) {
	var lines []string
	err := db.InTx(ctx, func(tx *store.Tx) error {
		lines = lines[:0]
		explain := "EXPLAIN QUERY PLAN "
		if db.Engine() == store.Postgres {
			off := []string{"enable_seqscan", "enable_bitmapscan"}
			if sortsOff {
				off = append(off, "enable_sort")
			}
			for _, off := range off {
				if _, err := tx.Exec(ctx, "SET LOCAL "+off+" = off"); err != nil {
					return err
				}
			}
			explain = "EXPLAIN "
		}
		explained, explainArgs := explain+query, args
		if db.Engine() == store.Postgres {
			var err error
			if explained, explainArgs, err = pgGenericPlan(ctx, tx, query, args); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, explained, explainArgs...)
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
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		if strings.HasPrefix(explained, "EXPLAIN EXECUTE "+genericPlan) {
			// Prepared statements outlive the transaction, and pgx's own
			// are on the same connection: only this one goes.
			if _, err := tx.Exec(ctx, "DEALLOCATE "+genericPlan); err != nil {
				return err
			}
		}
		return markWholeWalks(ctx, tx, db.Engine(), lines)
	})
	if err != nil {
		return "", fmt.Errorf("explain %s: %w", query, err)
	}
	return strings.Join(lines, "\n"), nil
}

// genericPlan names the statement [pgGenericPlan] prepares.
const genericPlan = "steward_generic_plan"

// pgParam matches a PostgreSQL parameter ($1).
var pgParam = regexp.MustCompile(`\$(\d+)`)

// pgGenericPlan returns the EXPLAIN that shows the plan PostgreSQL runs
// query by: the generic plan, the one a prepared statement settles on
// after five calls, which knows no argument. A plan for the test's
// arguments could use a partial index that the generic plan cannot prove
// applies (request_key = $1 and an index of the non-empty keys, issue
// 46). A query marked [store.PlanPerCall] is planned for its arguments on
// every call, so it is explained with them.
func pgGenericPlan(ctx context.Context, tx *store.Tx, query string, args []any) (string, []any, error) {
	params := 0
	for _, m := range pgParam.FindAllStringSubmatch(query, -1) {
		n, _ := strconv.Atoi(m[1])
		params = max(params, n)
	}
	if params == 0 || strings.Contains(query, store.PlanPerCall) {
		return "EXPLAIN " + query, args, nil
	}
	if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_generic_plan"); err != nil {
		return "", nil, err
	}
	if _, err := tx.Exec(ctx, "PREPARE "+genericPlan+" AS "+query); err != nil {
		return "", nil, err
	}
	// The generic plan is the same whatever the arguments: NULL fits
	// every parameter's type.
	return "EXPLAIN EXECUTE " + genericPlan + "(" + strings.TrimSuffix(strings.Repeat("NULL, ", params), ", ") + ")", nil, nil
}

// pgIndexWalk matches a PostgreSQL index scan node; sqliteIndexWalk, a
// SQLite walk of a whole index.
var (
	pgIndexWalk     = regexp.MustCompile(`^(\s*)(?:->\s*)?Index (?:Only )?Scan (?:Backward )?using (\S+) on \S+`)
	sqliteIndexWalk = regexp.MustCompile(`^SCAN (\w+) USING (?:COVERING )?INDEX (\w+)`)
)

// wholeIndex marks a PostgreSQL index scan with no Index Cond: it reads
// the whole index, every row of its table, in the index's order.
const wholeIndex = "  [whole index]"

// markWholeWalks rewrites lines so that a walk of a whole index reads as a
// scan only when it is one. PostgreSQL's plain "Index Scan using i" hides
// a walk of every row when no Index Cond bounds it (the way a LIMIT with
// an ORDER BY on the primary key can read a million rows to find none);
// such a node is marked [whole index]. A walk of a partial index reads
// only what its predicate keeps, a queue's worth of rows, so it is not a
// scan on either engine: SQLite's "SCAN t USING INDEX i" then becomes
// "WALK t USING PARTIAL INDEX i". Keep such predicates narrow.
func markWholeWalks(ctx context.Context, tx *store.Tx, engine store.Engine, lines []string) error {
	partial := func(index string) (bool, error) {
		q := "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ? AND sql LIKE '% WHERE %'"
		if engine == store.Postgres {
			q = "SELECT count(*) FROM pg_index WHERE indexrelid = to_regclass($1) AND indpred IS NOT NULL"
		}
		var n int
		err := tx.QueryRow(ctx, q, index).Scan(&n)
		return n > 0, err
	}
	for i, line := range lines {
		walk := pgIndexWalk
		if engine == store.SQLite {
			walk = sqliteIndexWalk
		}
		m := walk.FindStringSubmatch(line)
		if m == nil || (engine == store.Postgres && bounded(lines[i+1:], len(m[1]))) {
			continue
		}
		p, err := partial(m[2])
		switch {
		case err != nil:
			return err
		case engine == store.SQLite && p:
			lines[i] = "WALK " + m[1] + " USING PARTIAL INDEX " + m[2]
		case engine == store.Postgres && !p:
			lines[i] += wholeIndex
		}
	}
	return nil
}

// bounded reports whether the detail lines of a PostgreSQL plan node
// (those after it, indented deeper than indent, up to its first child)
// include an Index Cond.
func bounded(details []string, indent int) bool {
	for _, d := range details {
		trimmed := strings.TrimLeft(d, " ")
		if len(d)-len(trimmed) <= indent || strings.HasPrefix(trimmed, "->") {
			return false
		}
		if strings.HasPrefix(trimmed, "Index Cond:") {
			return true
		}
	}
	return false
}

// scan matches a step that reads a whole table: SQLite's "SCAN t" (with or
// without an index: a full index walk is a scan too), PostgreSQL's "Seq
// Scan on t" or an index scan marked [whole index] by [markWholeWalks].
var scan = regexp.MustCompile(`(?m)^\s*(?:->\s*)?(?:SCAN (\w+)[^\n]*|Seq Scan on (\w+)|Index (?:Only )?Scan (?:Backward )?using \S+ on (\w+).*\[whole index\]$)`)

// sqliteValues matches SQLite's scan of a multi-row VALUES list.
var sqliteValues = regexp.MustCompile(`SCAN \d+-ROW VALUES CLAUSE`)

// sorts matches a step that sorts what it read: SQLite's temporary B-tree
// for an ORDER BY, or for its "LAST TERM OF" or "RIGHT PART OF" (an index
// walk in the order of the first terms, the rest sorted: an ORDER BY
// whose terms run in directions no index walk gives), PostgreSQL's Sort
// node (Incremental Sort is its partial one).
var sorts = regexp.MustCompile(`(?m)USE TEMP B-TREE FOR (?:(?:LAST TERM|RIGHT PART) OF )?ORDER BY|^\s*(?:->\s*)?(?:Incremental )?Sort\s+\(`)

// ScannedTables are the tables plan (from [QueryPlan]) reads whole.
func ScannedTables(plan string) []string {
	var tables []string
	for _, m := range scan.FindAllStringSubmatch(plan, -1) {
		if strings.Contains(m[0], "VIRTUAL TABLE") || sqliteValues.MatchString(m[0]) {
			continue // json_each, a VALUES list: what the statement was given
		}
		tables = append(tables, m[1]+m[2]+m[3])
	}
	return tables
}

// WantNoScan fails t if plan (from [QueryPlan]) reads any of tables whole,
// or sorts, saying which: a query on a hot path must cost what it returns,
// not what is stored.
func WantNoScan(t testing.TB, name, plan string, tables ...string) {
	t.Helper()
	for _, table := range ScannedTables(plan) {
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

// WantIndex fails t unless plan (from [QueryPlan]) reads through index:
// for a query whose other indexes would be walked in range yet hold far
// more rows than it is for, which [WantNoScan] cannot tell.
func WantIndex(t testing.TB, name, plan, index string) {
	t.Helper()
	if !regexp.MustCompile(`\b` + regexp.QuoteMeta(index) + `\b`).MatchString(plan) {
		t.Errorf("%s does not read through %s:\n%s", name, index, plan)
	}
}
