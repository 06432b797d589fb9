package storetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestQueries_EveryPackageAgreesAcrossEnginesAndWithItsGo runs the checks
// of CheckQueryParity on every package of the module that has a
// sql/{sqlite,postgres} directory, so a package that never calls it is
// checked too.
func TestQueries_EveryPackageAgreesAcrossEnginesAndWithItsGo(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "..")
	var pkgs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") && path != root {
			return filepath.SkipDir
		}
		if d.Name() != "sql" {
			return nil
		}
		if _, err := os.Stat(filepath.Join(path, "sqlite")); err != nil {
			return nil
		}
		pkgs = append(pkgs, filepath.Dir(path))
		return filepath.SkipDir
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatalf("no sql/sqlite directory under %s", root)
	}
	for _, dir := range pkgs {
		rel, _ := filepath.Rel(root, dir)
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			t.Parallel()
			checkQueries(t, os.DirFS(dir), "sql", dir)
		})
	}
}

func TestParams_CountedOutsideLiteralsAndComments(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, reason string
		sqlite       string
		postgres     string
		want         int
	}{
		{name: "Plain", reason: "one ? per parameter; $n counted once however often it is used",
			sqlite: "SELECT a FROM t WHERE id = ? AND v = ?", postgres: "SELECT a FROM t WHERE id = $1 AND (v = $2 OR $2 IS NULL)", want: 2},
		{name: "None", reason: "a statement may take no parameter",
			sqlite: "SELECT 1", postgres: "SELECT 1", want: 0},
		{name: "StringsAndComments", reason: "? and $n inside literals, identifiers and comments are not parameters",
			sqlite:   "-- is it ? \nSELECT '?', \"a?\", json_extract(x, '$.a') /* ? */ FROM t WHERE id = ? AND s = 'it''s ?'",
			postgres: "-- $9\nSELECT '$3', \"a$4\", x->>'a' /* $5 /* nested $6 */ */ FROM t WHERE id = $1 AND s = E'\\' $7' AND y = $$ $8 $$",
			want:     1},
		{name: "Numbered", reason: "SQLite's ?NNN takes that number, and a plain ? the next",
			sqlite: "SELECT ?2, ?1, ?", postgres: "SELECT $2, $1, $3", want: 3},
		{name: "CastsAndOperators", reason: "::casts, jsonb's ? operator and identifiers with $ are not parameters",
			sqlite: "SELECT ? ", postgres: "SELECT $1::jsonb ? 'k', a$b FROM t", want: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got, err := sqliteParams(tc.sqlite); err != nil || got != tc.want {
				t.Errorf("%s\nsqliteParams(%q) = %d, %v; want %d", tc.reason, tc.sqlite, got, err, tc.want)
			}
			if got, err := postgresParams(tc.postgres); err != nil || got != tc.want {
				t.Errorf("%s\npostgresParams(%q) = %d, %v; want %d", tc.reason, tc.postgres, got, err, tc.want)
			}
		})
	}
	if _, err := postgresParams("SELECT $1, $3"); err == nil {
		t.Error("postgresParams accepted $3 without $2")
	}
	if _, err := sqliteParams("SELECT 'open"); err == nil {
		t.Error("sqliteParams accepted an unterminated string")
	}
}

// recorder is a testing.TB that keeps the errors it is given.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, format)
}

func TestCheckQueries_FindsMismatchesAndUnknownNames(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"sql/sqlite/t.sql": {Data: []byte("-- name: TGet :one\nSELECT a FROM t WHERE id = ?;\n" +
			"-- name: TSet :exec\nUPDATE t SET a = ? WHERE id = ?;\n-- name: TLiteOnly :exec\nSELECT 1;\n")},
		"sql/postgres/t.sql": {Data: []byte("-- name: TGet :one\nSELECT a FROM t WHERE id = $1;\n" +
			"-- name: TSet :exec\nUPDATE t SET a = $1 WHERE id = $1;\n")},
	}
	goDir := t.TempDir()
	src := `package x

import "github.com/stewardhq/steward/internal/store"

type Service struct{ q store.Queries }

var byEngine = map[store.Engine]store.Queries{}

func (s *Service) run(name string, h interface{ Get(string) string }) {
	_ = s.q.Get("TGet")
	_ = s.q.Get("TGte")
	_ = byEngine[store.SQLite].Get("TSet")
	_ = s.q.Get(name)
	_ = h.Get("NotAQuery")
	qs := store.MustLoadQueries(nil, "sql", store.SQLite)
	_ = qs.Get("Missing")
}
`
	if err := os.WriteFile(filepath.Join(goDir, "x.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	checkQueries(r, fsys, "sql", goDir)
	want := []string{
		"query %s is defined on %s only",                            // TLiteOnly
		"query %s takes %d parameters on sqlite but %d on postgres", // TSet
		"%s: no query named %s in %s",                               // TGte
		"%s: Get's argument is not a string literal, so no test can check the query exists",
		"%s: no query named %s in %s", // Missing
	}
	if strings.Join(r.errs, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(r.errs, "\n"), strings.Join(want, "\n"))
	}
}
