// Command querygen writes typed Go functions for a domain package's named
// SQL queries (the "-- name: X :one" sections of sql/sqlite/*.sql and
// sql/postgres/*.sql). A package runs it with go generate, next to the
// go:embed of its sql directory:
//
//	//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//
// For every query it writes one method on a per-package statements type
// (built once per engine from the embedded files, so the SQL that runs is the
// engine's own and the store's statement cache and group commit keep working),
// with typed arguments (a params struct beyond two) and, for :one and :many,
// typed rows; :exec returns the rows affected.
//
// It is Steward's own and not sqlc because the package holds one domain over
// two engines: sqlc generates per engine, which would give two incompatible
// sets of Go types for the same query. Here the types come from PostgreSQL,
// which describes each statement on a real server (parameter and result
// types, and the table column behind each result for its NOT NULL); SQLite's
// text must agree with it. The generator refuses, naming the file and query,
// when:
//
//   - a query exists on one engine only, or has a different kind;
//   - the engines' parameters differ in number or names, or their result
//     columns in number or names (SQLite's text is parsed, not prepared:
//     its names come from the same rules as PostgreSQL's);
//   - it cannot name a parameter. A parameter is named after the column it
//     is compared with or written to (x = $1, VALUES matched to the INSERT's
//     columns, SET x = $1; min_x for x > $1 and max_x for x < $1), a
//     "$1::text = ” OR x = $2" test after the x it tests, LIMIT and OFFSET
//     after themselves. Otherwise, or to choose better names, annotate the
//     query in both files: "-- params: instance_id, project, project".
//     Positions with the same name are one argument;
//   - a type has no Go mapping, or a computed result column has no AS name.
//
// A result column is a pointer (nil for NULL) unless its table column is NOT
// NULL and not on the outer side of a LEFT JOIN, or it is a count, EXISTS, a NULL test,
// COALESCE or literal, or the query says "-- notnull: col, …".
//
// It needs PostgreSQL: STEWARD_TEST_DATABASE_URL (as the tests) names the
// server; it migrates a schema of its own there and drops it. With
// QUERYGEN_CHECK_DIR set it writes there instead and fails when the
// committed file differs (scripts/test does this).
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/stewardhq/steward/internal/store"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.sqlDir, "sql", "sql", "the directory holding sqlite/ and postgres/")
	flag.StringVar(&cfg.fsVar, "fs", "sqlFS", "the package's embed.FS variable holding -sql")
	flag.StringVar(&cfg.out, "out", "queries.gen.go", "the file to write")
	flag.StringVar(&cfg.typeName, "type", "queries", "the name of the generated statements type")
	flag.StringVar(&cfg.pkg, "pkg", os.Getenv("GOPACKAGE"), "the package's name")
	flag.BoolVar(&cfg.river, "river", false, "migrate River's tables too (for queries that read them)")
	flag.Parse()
	if err := run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "querygen:", err)
		os.Exit(1)
	}
}

type config struct {
	sqlDir, fsVar, out, typeName, pkg string
	river                             bool
}

func run(ctx context.Context, cfg config) error {
	start := time.Now()
	if cfg.pkg == "" {
		return fmt.Errorf("no package name: run it from go generate or pass -pkg")
	}
	pg, err := readQueries(filepath.Join(cfg.sqlDir, string(store.Postgres)))
	if err != nil {
		return err
	}
	lite, err := readQueries(filepath.Join(cfg.sqlDir, string(store.SQLite)))
	if err != nil {
		return err
	}
	conn, done, err := migratedSchema(ctx, cfg.river)
	if err != nil {
		return err
	}
	defer done()
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range pg {
			if !yield(n) {
				return
			}
		}
	})
	var gens []generated
	for n := range lite {
		if pg[n] == nil {
			return fmt.Errorf("%s: query %s is defined on sqlite only", filepath.Join(cfg.sqlDir, "sqlite", lite[n].File), n)
		}
	}
	for _, n := range names {
		g, err := generate(ctx, conn, pg[n], lite[n])
		if err != nil {
			return fmt.Errorf("%s: query %s: %w", filepath.Join(cfg.sqlDir, "postgres", pg[n].File), n, err)
		}
		gens = append(gens, g)
	}
	src, err := emit(cfg, gens)
	if err != nil {
		return err
	}
	if dir := os.Getenv("QUERYGEN_CHECK_DIR"); dir != "" {
		return check(cfg, dir, src)
	}
	if err := os.WriteFile(cfg.out, src, 0o644); err != nil {
		return err
	}
	if os.Getenv("QUERYGEN_TIMING") != "" {
		fmt.Fprintf(os.Stderr, "querygen: %s: %d queries in %s\n", cfg.pkg, len(gens), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// check writes src under dir and fails unless the committed file is the same.
func check(cfg config, dir string, src []byte) error {
	wd, _ := os.Getwd()
	tmp := filepath.Join(dir, filepath.Base(wd)+"."+cfg.out)
	if err := os.WriteFile(tmp, src, 0o644); err != nil {
		return err
	}
	have, err := os.ReadFile(cfg.out)
	if err != nil || !bytes.Equal(have, src) {
		return fmt.Errorf("%s/%s is not what its sql files generate: run scripts/gen-queries (docs/queries.md); the current output is in %s", wd, cfg.out, tmp)
	}
	return nil
}

// migratedSchema migrates a new schema on the server named by
// STEWARD_TEST_DATABASE_URL (River's tables too with river) and returns a
// connection using it; done drops it.
func migratedSchema(ctx context.Context, river bool) (*pgx.Conn, func(), error) {
	base := os.Getenv("STEWARD_TEST_DATABASE_URL")
	if base == "" {
		return nil, nil, fmt.Errorf("STEWARD_TEST_DATABASE_URL is not set: querygen describes the queries on PostgreSQL (see docs/queries.md)")
	}
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return nil, nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "querygen_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close(ctx)
		return nil, nil, err
	}
	drop := func() {
		_, _ = admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
		admin.Close(ctx)
	}
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return nil, nil, err
	}
	qv := u.Query()
	qv.Set("search_path", schema)
	u.RawQuery = qv.Encode()
	cfg := store.Config{DatabaseURL: u.String()}
	if river {
		cfg.Migrators = append(cfg.Migrators, store.Migrator{Component: "river", Up: migrateRiver})
	}
	db, err := store.Open(ctx, cfg)
	if err != nil {
		drop()
		return nil, nil, err
	}
	db.Close()
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		drop()
		return nil, nil, err
	}
	return conn, func() { conn.Close(ctx); drop() }, nil
}

// migrateRiver creates River's tables, as jobs.Migrator does on PostgreSQL
// (querygen cannot import jobs: jobs is built from what it generates).
func migrateRiver(ctx context.Context, db *store.DB) ([]store.Migration, error) {
	m, err := rivermigrate.New(riverpgxv5.New(db.PgxPool()), nil)
	if err != nil {
		return nil, err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return nil, err
}
