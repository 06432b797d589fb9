package storetest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/store"
)

// CheckQueryParity fails t unless the named queries under dir/sqlite and
// dir/postgres in fsys agree, and agree with the Go code that runs them:
//
//   - every name is defined on both engines;
//   - with the same number of parameters (? on SQLite; on PostgreSQL the
//     highest $n, and no $n below it unused), so a statement binds the same
//     arguments on both;
//   - every name the package's Go files pass to [store.Queries.Get] is
//     defined, so a misspelled name fails a test, not a request.
//
// The Go files are those of the working directory, which for a test is its
// package's directory. Call it from each package that embeds queries:
//
//	func TestQueries_SameOnBothEngines(t *testing.T) { storetest.CheckQueryParity(t, sqlFS, "sql") }
func CheckQueryParity(t testing.TB, fsys fs.FS, dir string) {
	t.Helper()
	checkQueries(t, fsys, dir, ".")
}

// checkQueries is CheckQueryParity for the Go package in goDir.
func checkQueries(t testing.TB, fsys fs.FS, dir, goDir string) {
	t.Helper()
	lite, err := store.LoadQueries(fsys, dir, store.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := store.LoadQueries(fsys, dir, store.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Compact(slices.Sorted(slices.Values(append(lite.Names(), pg.Names()...)))) {
		l, inLite := lite[name]
		p, inPG := pg[name]
		if !inLite || !inPG {
			only := store.SQLite
			if inPG {
				only = store.Postgres
			}
			t.Errorf("query %s is defined on %s only", name, only)
			continue
		}
		nl, err := sqliteParams(l)
		if err != nil {
			t.Errorf("query %s on sqlite: %v", name, err)
			continue
		}
		np, err := postgresParams(p)
		if err != nil {
			t.Errorf("query %s on postgres: %v", name, err)
			continue
		}
		if nl != np {
			t.Errorf("query %s takes %d parameters on sqlite but %d on postgres", name, nl, np)
		}
	}
	uses, err := queryUses(goDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range uses {
		switch _, ok := lite[u.name]; {
		case u.name == "":
			t.Errorf("%s: Get's argument is not a string literal, so no test can check the query exists", u.pos)
		case !ok && pg[u.name] == "":
			t.Errorf("%s: no query named %s in %s", u.pos, u.name, dir)
		}
	}
}

// queryUse is a call of Queries.Get: the name passed ("" if not a literal).
type queryUse struct {
	pos  token.Position
	name string
}

// queryUses finds the Queries.Get calls in the Go files of dir. Without
// type checking (the package's dependencies would have to be loaded), it
// takes as query sets the struct fields declared with the type
// store.Queries, called on as a selector (s.q.Get("X")), and the variables
// and parameters declared with it or assigned from store.LoadQueries or
// store.MustLoadQueries, called on by name (queries[engine].Get("X")). So a
// local variable that shares a field's name (q := r.URL.Query()) is not
// taken for a query set.
func queryUses(dir string) ([]queryUse, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var parsed []*ast.File
	sets := querySets{fields: map[string]bool{}, vars: map[string]bool{}}
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, f)
		ast.Inspect(f, func(n ast.Node) bool { sets.add(n); return true })
	}
	var uses []queryUse
	for _, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Get" || !sets.holds(sel.X) {
				return true
			}
			u := queryUse{pos: fset.Position(call.Pos())}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				u.name, _ = strconv.Unquote(lit.Value)
			}
			uses = append(uses, u)
			return true
		})
	}
	return uses, nil
}

// querySets are the names a package declares as holding store.Queries.
type querySets struct {
	fields, vars map[string]bool
}

// add records the query sets n declares.
func (qs querySets) add(n ast.Node) {
	fields := func(list *ast.FieldList, into map[string]bool) {
		for _, f := range list.List {
			if mentionsQueries(f.Type) {
				for _, id := range f.Names {
					into[id.Name] = true
				}
			}
		}
	}
	switch n := n.(type) {
	case *ast.StructType:
		fields(n.Fields, qs.fields)
	case *ast.FuncType:
		fields(n.Params, qs.vars)
	case *ast.ValueSpec:
		if mentionsQueries(n.Type) || slices.ContainsFunc(n.Values, mentionsQueries) {
			for _, id := range n.Names {
				qs.vars[id.Name] = true
			}
		}
	case *ast.AssignStmt:
		if id, ok := n.Lhs[0].(*ast.Ident); ok && len(n.Rhs) == 1 && mentionsQueries(n.Rhs[0]) {
			qs.vars[id.Name] = true
		}
	}
}

// holds reports whether e is one of the query sets: s.q, queries[engine].
func (qs querySets) holds(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return qs.vars[e.Name]
	case *ast.SelectorExpr:
		return qs.fields[e.Sel.Name]
	case *ast.IndexExpr:
		return qs.holds(e.X)
	case *ast.ParenExpr:
		return qs.holds(e.X)
	}
	return false
}

// mentionsQueries reports whether e names store.Queries or calls
// store.LoadQueries or store.MustLoadQueries (as a type, a composite
// literal's type or a value).
func mentionsQueries(e ast.Expr) bool {
	if e == nil {
		return false
	}
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if ok && isIdent(sel.X, "store") {
			switch sel.Sel.Name {
			case "Queries", "LoadQueries", "MustLoadQueries":
				found = true
			}
		}
		return !found
	})
	return found
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// sqliteParams counts the parameters of a SQLite statement: each ? takes
// the next number and ?NNN takes NNN, as SQLite numbers them.
func sqliteParams(query string) (int, error) {
	n := 0
	err := scanSQL(query, false, func(i int) int {
		if query[i] != '?' {
			return i + 1
		}
		j := i + 1
		for j < len(query) && isDigit(query[j]) {
			j++
		}
		if j == i+1 {
			n++
		} else {
			k, _ := strconv.Atoi(query[i+1 : j])
			n = max(n, k)
		}
		return j
	})
	return n, err
}

// postgresParams returns the highest $n of a PostgreSQL statement, failing
// when a number below it is never used (PostgreSQL cannot type it).
func postgresParams(query string) (int, error) {
	used := map[int]bool{}
	err := scanSQL(query, true, func(i int) int {
		if query[i] != '$' || (i > 0 && isIdentByte(query[i-1])) {
			return i + 1
		}
		j := i + 1
		for j < len(query) && isDigit(query[j]) {
			j++
		}
		if j > i+1 {
			k, _ := strconv.Atoi(query[i+1 : j])
			used[k] = true
		}
		return j
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for k := range used {
		n = max(n, k)
	}
	for k := 1; k <= n; k++ {
		if !used[k] {
			return 0, fmt.Errorf("$%d is not used but $%d is", k, n)
		}
	}
	return n, nil
}

// scanSQL calls code at each byte of query outside comments, string
// literals and quoted identifiers (and, on PostgreSQL, dollar-quoted
// strings); code returns where to go on.
func scanSQL(query string, postgres bool, code func(i int) int) error {
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case strings.HasPrefix(query[i:], "--"):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				return nil
			}
			i += end + 1
		case strings.HasPrefix(query[i:], "/*"):
			end := blockCommentEnd(query, i, postgres)
			if end < 0 {
				return fmt.Errorf("unterminated /* comment")
			}
			i = end
		case c == '\'' || c == '"' || c == '`':
			backslash := postgres && c == '\'' && i > 0 && (query[i-1] == 'E' || query[i-1] == 'e') &&
				(i == 1 || !isIdentByte(query[i-2]))
			end := quotedEnd(query, i, backslash)
			if end < 0 {
				return fmt.Errorf("unterminated %c quote", c)
			}
			i = end
		case postgres && c == '$' && dollarTag(query[i:]) != "":
			tag := dollarTag(query[i:])
			end := strings.Index(query[i+len(tag):], tag)
			if end < 0 {
				return fmt.Errorf("unterminated %s string", tag)
			}
			i += len(tag) + end + len(tag)
		default:
			i = code(i)
		}
	}
	return nil
}

// blockCommentEnd returns the index after the comment opening at i, or -1.
// PostgreSQL nests block comments; SQLite does not.
func blockCommentEnd(query string, i int, nested bool) int {
	depth := 0
	for j := i; j+1 < len(query); j++ {
		switch {
		case query[j] == '/' && query[j+1] == '*' && (nested || depth == 0):
			depth++
			j++
		case query[j] == '*' && query[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// quotedEnd returns the index after the quoted text opening at i (a doubled
// quote stands for itself), or -1.
func quotedEnd(query string, i int, backslash bool) int {
	q := query[i]
	for j := i + 1; j < len(query); j++ {
		switch {
		case backslash && query[j] == '\\':
			j++
		case query[j] == q && j+1 < len(query) && query[j+1] == q:
			j++
		case query[j] == q:
			return j + 1
		}
	}
	return -1
}

// dollarTag returns the $tag$ or $$ that s starts with, or "" when s starts
// with a parameter ($1) or anything else.
func dollarTag(s string) string {
	for j := 1; j < len(s); j++ {
		switch {
		case s[j] == '$':
			return s[:j+1]
		case isDigit(s[j]) && j == 1, !isIdentByte(s[j]):
			return ""
		}
	}
	return ""
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}
