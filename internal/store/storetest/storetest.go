// Package storetest gives tests a real, migrated database of their own, on
// SQLite (always) and on PostgreSQL (when STEWARD_TEST_DATABASE_URL names a
// server; scripts/test starts a throwaway one). Production code never imports it.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/store"
)

// EnvDatabaseURL names the PostgreSQL server tests may create schemas in.
const EnvDatabaseURL = "STEWARD_TEST_DATABASE_URL"

// EnvRequirePostgres, when set to 1, fails (instead of skipping) the
// PostgreSQL half of the suite when no server is configured. CI sets it.
const EnvRequirePostgres = "STEWARD_TEST_REQUIRE_POSTGRES"

// Engines lists the engines the suite runs on here.
func Engines() []store.Engine {
	if os.Getenv(EnvDatabaseURL) != "" {
		return []store.Engine{store.SQLite, store.Postgres}
	}
	return []store.Engine{store.SQLite}
}

// ForEachEngine runs fn as a subtest per engine ("sqlite", "postgres"). When
// PostgreSQL is not configured its subtest is skipped, and says so, unless
// EnvRequirePostgres is set.
func ForEachEngine(t *testing.T, fn func(t *testing.T, engine store.Engine)) {
	t.Helper()
	for _, e := range []store.Engine{store.SQLite, store.Postgres} {
		t.Run(string(e), func(t *testing.T) {
			if e == store.Postgres && os.Getenv(EnvDatabaseURL) == "" {
				if os.Getenv(EnvRequirePostgres) == "1" {
					t.Fatalf("%s is not set but %s=1", EnvDatabaseURL, EnvRequirePostgres)
				}
				t.Skipf("PostgreSQL half skipped: set %s (scripts/test does)", EnvDatabaseURL)
			}
			fn(t, e)
		})
	}
}

// Config returns a store.Config for a fresh, empty database on engine: a
// temp dir for SQLite, a new schema for PostgreSQL (dropped at cleanup). Use it
// to start a whole server; use Open for a store alone.
func Config(t testing.TB, engine store.Engine) store.Config {
	t.Helper()
	if engine == store.SQLite {
		return store.Config{DataDir: t.TempDir()}
	}
	return store.Config{DatabaseURL: NewSchemaURL(t)}
}

// Open returns a migrated database of its own on engine ([MigratedConfig]),
// closed at cleanup.
func Open(t testing.TB, engine store.Engine, migrators ...store.Migrator) *store.DB {
	t.Helper()
	cfg := MigratedConfig(t, engine, migrators...)
	cfg.Migrators = migrators
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open %s store: %v", engine, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// NewSchemaURL creates a schema on the test PostgreSQL server and returns a
// URL whose connections use it (search_path), so each test has its own
// tables, River's included. The schema is dropped at cleanup.
func NewSchemaURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvDatabaseURL)
	if base == "" {
		t.Skipf("%s is not set", EnvDatabaseURL)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to test postgres: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("connect to drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvDatabaseURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
