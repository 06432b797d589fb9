package store_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stewardhq/steward/internal/store"
)

func TestLoadQueries_RefusesABareLimitParameterOnSQLite(t *testing.T) {
	fsys := fstest.MapFS{
		"sql/sqlite/q.sql":   {Data: []byte("-- name: Page :many\nSELECT 1 LIMIT ?;\n")},
		"sql/postgres/q.sql": {Data: []byte("-- name: Page :many\nSELECT 1 LIMIT $1;\n")},
	}
	if _, err := store.LoadQueries(fsys, "sql", store.SQLite); err == nil || !strings.Contains(err.Error(), "LIMIT CAST") {
		t.Fatalf("LoadQueries(sqlite) = %v, want the bare LIMIT refused", err)
	}
	if _, err := store.LoadQueries(fsys, "sql", store.Postgres); err != nil {
		t.Fatalf("LoadQueries(postgres) = %v", err)
	}
}
