package server

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tableOwner is the package whose SQL may write a table, and those that
// may also read it.
type tableOwner struct {
	owner   string
	readers []string
}

// tableOwners is every table of the store and who owns it (STYLE §1: a
// domain owns its tables). Only the owner's SQL writes a table; only the
// owner's and its readers' SQL reads it. Anything else needs that table
// goes through the owner's package, so a change to a table finds its
// users by the import graph. Adding a reader is a reviewed change, as an
// import edge is.
var tableOwners = map[string]tableOwner{
	// Bearer tokens, kept as hashes.
	"api_tokens": {owner: "internal/tokens"},
	// The console's sign-in sessions: they live and die with their token.
	"console_sessions": {owner: "internal/tokens"},
	// App instances' runtimes as last reported.
	"app_runtimes": {owner: "internal/repair"},
	// Repair, restart and reconcile operations on app instances.
	"repair_operations": {owner: "internal/repair"},
	// The audit log.
	"audit_events": {owner: "internal/audit"},
	// Orders. The lifecycle makes every transition and write; internal/order
	// is the read side the domains below the lifecycle import.
	"catalog_item_instances": {owner: "internal/lifecycle", readers: []string{"internal/order"}},
	// An order's event log.
	"order_events": {owner: "internal/lifecycle"},
	// Stored lifecycle definitions.
	"lifecycles": {owner: "internal/lifecycle"},
	// Catalog items and service types.
	"catalog_items": {owner: "internal/catalog"},
	"service_types": {owner: "internal/catalog"},
	// The SPRM: the registry, the provider-facing instances, their live
	// counts and the cleanup queue.
	"providers":               {owner: "internal/sprm"},
	"provider_live_instances": {owner: "internal/sprm"},
	"service_type_instances":  {owner: "internal/sprm"},
	"cleanup_tasks":           {owner: "internal/sprm"},
	// Resources: one realisation of an order.
	"resources": {owner: "internal/placement"},
	// Adapters' reports on orders.
	"order_adapter_statuses": {owner: "internal/adapterstatus"},
	// The requests for orders' reconciles and the changes they act on.
	"order_changes": {owner: "internal/reconcile"},
	// The sentinel's due-time queue of decisions.
	"sentinel_marks": {owner: "internal/sentinel"},
	// The transactional outbox.
	"event_outbox": {owner: "internal/events"},
	// Idempotency-Keys, and the key page tokens are signed with.
	"idempotency_keys": {owner: "internal/httpapi"},
	"server_secrets":   {owner: "internal/httpapi"},
	// Long-running operations.
	"operations": {owner: "internal/operations"},
	// Policies, and the revision replicas reload them by.
	"policies":        {owner: "internal/policy"},
	"policy_revision": {owner: "internal/policy"},
	// The processes sharing the store.
	"steward_processes": {owner: "internal/peers"},
	// River's, migrated by River: internal/jobs is the one package that
	// goes below River's API (jobs.md).
	"river_job":    {owner: "internal/jobs"},
	"river_leader": {owner: "internal/jobs"},
	// The migrations' own record.
	"goose_db_version": {owner: "internal/store"},
}

// riverTables are the tables of tableOwners that Steward's migrations do
// not create.
var riverTables = []string{"river_job", "river_leader"}

// tableCrossing is a statement of pkg that uses table, which pkg does not
// own: query is the statement's name (-- name:) or, for SQL in Go, the
// declaration that holds it.
type tableCrossing struct {
	pkg, query, table string
}

// knownCrossings are the crossings there were when the test was written,
// each with what removes it (issue 47). The list only shrinks: a new
// crossing fails the test, and so does an entry that no longer crosses.
var knownCrossings = map[tableCrossing]string{
	{"internal/lifecycle", "OrderGet", "service_type_instances"}:     "step 3: through internal/sprm",
	{"internal/lifecycle", "OrderShow", "service_type_instances"}:    "step 3: through internal/sprm",
	{"internal/lifecycle", "OrderList", "service_type_instances"}:    "step 3: through internal/sprm",
	{"internal/lifecycle", "OrderGet", "resources"}:                  "step 3: through internal/placement",
	{"internal/lifecycle", "OrderShow", "resources"}:                 "step 3: through internal/placement",
	{"internal/lifecycle", "OrderList", "resources"}:                 "step 3: through internal/placement",
	{"internal/placement", "ResourceGet", "service_type_instances"}:  "step 3: through internal/sprm",
	{"internal/placement", "ResourceList", "service_type_instances"}: "step 3: through internal/sprm",
	{"internal/placement", "ResourcesPendingStalled", "service_type_instances"}: "step 3: through " +
		"internal/sprm",
}

// sqlObservers are packages whose SQL looks at a store from outside, as a
// test does, and is not checked: the crash harness reads the database of
// the binary it killed; the test packages seed and inspect theirs.
var sqlObservers = append([]string{"internal/crashtest"}, testOnly...)

// tableUse is one statement's use of a table.
type tableUse struct {
	file string
	line int
	tableCrossing
	write bool
}

func (u tableUse) String() string {
	return fmt.Sprintf("%s:%d %s %s %v", u.file, u.line, u.query, u.table, u.write)
}

func TestTables_UsedOnlyByTheirOwners(t *testing.T) {
	root := filepath.Join("..", "..")
	uses, err := tableUses(root)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[tableCrossing]bool{}
	for _, u := range uses {
		o, ok := tableOwners[u.table]
		if !ok {
			continue // not a table of the store: a CTE, an alias, a system catalog
		}
		if u.pkg == o.owner || (!u.write && slices.Contains(o.readers, u.pkg)) {
			continue
		}
		if _, ok := knownCrossings[u.tableCrossing]; ok {
			seen[u.tableCrossing] = true
			continue
		}
		verb := "reads"
		if u.write {
			verb = "writes"
		}
		owners := o.owner
		if len(o.readers) > 0 && !u.write {
			owners += " (read: " + strings.Join(o.readers, ", ") + ")"
		}
		t.Errorf("%s:%d: %s %s %s in %s, which %s owns: go through the owner's package", u.file, u.line, u.pkg, verb, u.table,
			u.query, owners)
	}
	for c, why := range knownCrossings {
		if !seen[c] {
			t.Errorf("knownCrossings: %s no longer uses %s in %s (%s): remove the entry", c.pkg, c.table, c.query, why)
		}
	}
}

// Every table the migrations leave is in tableOwners, and no other.
func TestTables_EveryTableHasAnOwner(t *testing.T) {
	tables, err := migratedTables(filepath.Join("..", "store", "migrations", "sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	tables = append(tables, riverTables...)
	tables = append(tables, "goose_db_version")
	for _, table := range tables {
		if _, ok := tableOwners[table]; !ok {
			t.Errorf("table %s has no entry in tableOwners: add it with its owning package", table)
		}
	}
	for table := range tableOwners {
		if !slices.Contains(tables, table) {
			t.Errorf("tableOwners lists %s, which no migration leaves", table)
		}
	}
}

// The checker finds what it is meant to: a read and a write of tables,
// qualified or aliased, past the names that are not tables.
func TestTables_ParsesStatements(t *testing.T) {
	const sql = `-- name: Q :many
WITH recent AS (SELECT id FROM orders_cte)
SELECT o.id, EXTRACT(EPOCH FROM o.t), (SELECT 1 FROM resources r WHERE r.id = o.id)
FROM recent JOIN catalog_item_instances o ON o.id = recent.id, json_each(?) AS v
WHERE o.x IS NOT DISTINCT FROM v.old AND s = 'FROM providers' -- FROM cleanup_tasks
FOR UPDATE;

-- name: W :exec
INSERT INTO sentinel_marks (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET a = excluded.a;
UPDATE resources SET a = 1;
DELETE FROM "operations" WHERE true;`
	got := statementUses("f.sql", "internal/x", sql, true)
	var short []string
	for _, u := range got {
		short = append(short, u.String())
	}
	want := []string{"f.sql:2 Q orders_cte false", "f.sql:3 Q resources false", "f.sql:4 Q catalog_item_instances false",
		"f.sql:9 W sentinel_marks true", "f.sql:10 W resources true", "f.sql:11 W operations true"}
	if !slices.Equal(short, want) {
		t.Errorf("uses:\n%s\nwant:\n%s", strings.Join(short, "\n"), strings.Join(want, "\n"))
	}
	const goSrc = `package x
const q = "SELECT a FROM providers p WHERE p.x = $1"
var chunked = wrap(func(values string) string {
	return "INSERT INTO event_outbox (a) " + values + " WHERE EXISTS (SELECT 1 FROM resources)"
})
var notSQL = fmt.Errorf("read from resources: %w", err)
var appender = store.NewAppender("audit_events", "id")`
	got, err := goUses("x.go", "internal/x", goSrc)
	if err != nil {
		t.Fatal(err)
	}
	short = short[:0]
	for _, u := range got {
		short = append(short, u.String())
	}
	want = []string{"x.go:2 q providers false", "x.go:4 chunked event_outbox true", "x.go:4 chunked resources false",
		"x.go:7 appender audit_events true"}
	if !slices.Equal(short, want) {
		t.Errorf("Go uses:\n%s\nwant:\n%s", strings.Join(short, "\n"), strings.Join(want, "\n"))
	}
}

// tableUses returns the table uses of every package's SQL under root: the
// sql/ files, and SQL written in Go outside the generated files.
func tableUses(root string) ([]tableUse, error) {
	var uses []tableUse
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && (path == filepath.Join(root, "tools") || d.Name() == "migrations" ||
			d.Name() == "testdata") {
			return filepath.SkipDir // tools is its own module; migrations are the store's schema
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		switch {
		case strings.HasSuffix(rel, ".sql") && strings.Contains(rel, "/sql/"):
			pkg, _, _ := strings.Cut(rel, "/sql/")
			if slices.Contains(sqlObservers, pkg) {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			uses = append(uses, statementUses(rel, pkg, string(b), true)...)
		case strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go"):
			pkg := filepath.ToSlash(filepath.Dir(rel))
			if slices.Contains(sqlObservers, pkg) {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if ast.IsGenerated(mustParse(path, b)) {
				return nil // queries.gen.go: its SQL is the sql/ files'
			}
			u, err := goUses(rel, pkg, string(b))
			if err != nil {
				return err
			}
			uses = append(uses, u...)
		}
		return nil
	})
	return uses, err
}

func mustParse(path string, src []byte) *ast.File {
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		panic(err)
	}
	return f
}

// goUses returns the table uses of the SQL in a Go file's string literals,
// each named by the top-level declaration that holds it. SQL in Go is
// written with upper-case keywords, which tells it from prose ("read
// from resources"); store.NewAppender's first argument is a table written.
func goUses(name, pkg, src string) ([]tableUse, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		return nil, err
	}
	var uses []tableUse
	for _, decl := range f.Decls {
		declName := declarationName(decl)
		ast.Inspect(decl, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewAppender" && len(n.Args) > 0 {
					if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						table, _ := strconv.Unquote(lit.Value)
						uses = append(uses, tableUse{file: name, line: fset.Position(lit.Pos()).Line,
							tableCrossing: tableCrossing{pkg: pkg, query: declName, table: table}, write: true})
						return false
					}
				}
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(n.Value)
				if err != nil {
					return true
				}
				line := fset.Position(n.Pos()).Line
				for _, u := range statementUses(name, pkg, s, false) {
					u.line, u.query = line+u.line-1, declName
					uses = append(uses, u)
				}
			}
			return true
		})
	}
	return uses, nil
}

func declarationName(decl ast.Decl) string {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		return d.Name.Name
	case *ast.GenDecl:
		for _, s := range d.Specs {
			if v, ok := s.(*ast.ValueSpec); ok && len(v.Names) > 0 {
				return v.Names[0].Name
			}
		}
	}
	return "?"
}

var (
	sqlComment = regexp.MustCompile(`--[^\n]*|/\*[\s\S]*?\*/`)
	// A quoted string, kept to its newlines so that lines still count.
	sqlString  = regexp.MustCompile(`'(?:[^']|'')*'`)
	queryName  = regexp.MustCompile(`(?m)^-- name: (\w+)`)
	cteName    = regexp.MustCompile(`(?i)(?:\bWITH|,)\s*(?:RECURSIVE\s+)?(\w+)\s*(?:\([^()]*\)\s*)?AS\s+(?:NOT\s+)?(?:MATERIALIZED\s+)?\(`)
	tableAfter = map[bool]*regexp.Regexp{
		// in a .sql file, any case; in Go, upper-case keywords only
		true:  regexp.MustCompile(`(?i)\b(DISTINCT\s+FROM|EPOCH\s+FROM|DO\s+UPDATE|FOR\s+UPDATE|FROM|JOIN|INTO|UPDATE)\s+"?([a-z_][a-z0-9_]*)"?(\s*[(.])?`),
		false: regexp.MustCompile(`\b(DISTINCT\s+FROM|EPOCH\s+FROM|DO\s+UPDATE|FOR\s+UPDATE|FROM|JOIN|INTO|UPDATE)\s+"?([a-z_][a-z0-9_]*)"?(\s*[(.])?`),
	}
)

// statementUses returns the tables sql reads and writes: the names after
// FROM, JOIN, INTO and UPDATE (DELETE FROM too), leaving out a CTE's
// name, a function (json_each(…)), a qualified column (IS DISTINCT FROM
// v.old) and the clauses that only look like one (FOR UPDATE, ON CONFLICT
// DO UPDATE, EXTRACT(EPOCH FROM …)). Comments and quoted strings are
// blanked first. Each statement is named by the "-- name:" above it.
func statementUses(file, pkg, sql string, anyCase bool) []tableUse {
	names := queryName.FindAllStringSubmatchIndex(sql, -1)
	blank := func(m string) string { return strings.Map(keepNewline, m) }
	code := sqlComment.ReplaceAllStringFunc(sql, blank)
	code = sqlString.ReplaceAllStringFunc(code, blank)
	ctes := map[string]bool{}
	for _, m := range cteName.FindAllStringSubmatch(code, -1) {
		ctes[strings.ToLower(m[1])] = true
	}
	var uses []tableUse
	for _, m := range tableAfter[anyCase].FindAllStringSubmatchIndex(code, -1) {
		keyword := strings.ToUpper(strings.Join(strings.Fields(code[m[2]:m[3]]), " "))
		table := strings.ToLower(code[m[4]:m[5]])
		after := ""
		if m[6] >= 0 {
			after = strings.TrimSpace(code[m[6]:m[7]])
		}
		// "(" after INTO is the column list; after FROM or JOIN, a call
		if strings.Contains(keyword, " ") || after == "." || after == "(" && keyword != "INTO" || ctes[table] {
			continue
		}
		query := ""
		for _, n := range names {
			if n[0] < m[0] {
				query = sql[n[2]:n[3]]
			}
		}
		uses = append(uses, tableUse{file: file, line: 1 + strings.Count(code[:m[4]], "\n"),
			tableCrossing: tableCrossing{pkg: pkg, query: query, table: table}, write: keyword != "FROM" && keyword != "JOIN" ||
				keyword == "FROM" && precededBy(code[:m[0]], "DELETE")})
	}
	return uses
}

func keepNewline(r rune) rune {
	if r == '\n' {
		return '\n'
	}
	return ' '
}

// precededBy says whether the last word of before is word.
func precededBy(before, word string) bool {
	f := strings.Fields(before)
	return len(f) > 0 && strings.EqualFold(f[len(f)-1], word)
}

// migratedTables returns the tables the migrations in dir leave, read from
// their Up sections in order.
func migratedTables(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	create := regexp.MustCompile(`(?i)\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)`)
	drop := regexp.MustCompile(`(?i)\bDROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(\w+)`)
	rename := regexp.MustCompile(`(?i)\bALTER\s+TABLE\s+(\w+)\s+RENAME\s+TO\s+(\w+)`)
	live := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		up, _, _ := strings.Cut(string(b), "-- +goose Down")
		up = sqlComment.ReplaceAllString(up, "")
		// Statements in order: a table made, renamed and dropped in one file.
		for _, stmt := range strings.Split(up, ";") {
			if m := create.FindStringSubmatch(stmt); m != nil {
				live[strings.ToLower(m[1])] = true
			}
			if m := rename.FindStringSubmatch(stmt); m != nil {
				delete(live, strings.ToLower(m[1]))
				live[strings.ToLower(m[2])] = true
			}
			if m := drop.FindStringSubmatch(stmt); m != nil {
				delete(live, strings.ToLower(m[1]))
			}
		}
	}
	var out []string
	for t := range live {
		out = append(out, t)
	}
	slices.Sort(out)
	return out, nil
}
