package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestGenerate_OnPostgres describes real statements: types and nullability
// come from PostgreSQL, and column names must agree with SQLite's text.
func TestGenerate_OnPostgres(t *testing.T) {
	if os.Getenv("STEWARD_TEST_DATABASE_URL") == "" {
		t.Skip("STEWARD_TEST_DATABASE_URL is not set (scripts/test sets it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, done, err := migratedSchema(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer done()

	pg := &query{Name: "TokenGet", Kind: ":one", SQL: "SELECT id, expire_time, COUNT(*) OVER () AS n FROM api_tokens WHERE id = $1"}
	lite := &query{Name: "TokenGet", Kind: ":one", SQL: "SELECT id, expire_time, COUNT(*) OVER () AS n FROM api_tokens WHERE id = ?"}
	g, err := generate(ctx, conn, pg, lite)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range g.columns {
		got = append(got, c.Name+" "+c.Type)
	}
	if want := "id string, expire_time *time.Time, n int64"; strings.Join(got, ", ") != want {
		t.Errorf("columns: got %s, want %s", strings.Join(got, ", "), want)
	}
	if len(g.fields) != 1 || g.fields[0].Name != "ID" || g.fields[0].Type != "string" {
		t.Errorf("parameters: got %+v, want one ID string", g.fields)
	}

	ins := &query{Name: "TokenRevoke", Kind: ":exec", SQL: "UPDATE api_tokens SET revoke_time = $1 WHERE id = $2"}
	g, err = generate(ctx, conn, ins, &query{Name: "TokenRevoke", Kind: ":exec", SQL: "UPDATE api_tokens SET revoke_time = ? WHERE id = ?"})
	if err != nil {
		t.Fatal(err)
	}
	if g.fields[0].Type != "*time.Time" {
		t.Errorf("a parameter written to a nullable column: got %s, want *time.Time", g.fields[0].Type)
	}

	lite.SQL = "SELECT id, revoke_time, COUNT(*) OVER () AS n FROM api_tokens WHERE id = ?"
	if _, err := generate(ctx, conn, pg, lite); err == nil || !strings.Contains(err.Error(), "result column 2 is expire_time on postgres but revoke_time on sqlite") {
		t.Errorf("columns that differ: got %v", err)
	}
	lite.SQL = "SELECT id, expire_time FROM api_tokens WHERE id = ?"
	if _, err := generate(ctx, conn, pg, lite); err == nil || !strings.Contains(err.Error(), "returns 3 columns on postgres but 2 on sqlite") {
		t.Errorf("column counts that differ: got %v", err)
	}
	unnamed := &query{Name: "X", Kind: ":one", SQL: "SELECT id || 'x' FROM api_tokens WHERE id = $1"}
	if _, err := generate(ctx, conn, unnamed, &query{Name: "X", Kind: ":one", SQL: "SELECT id || 'x' FROM api_tokens WHERE id = ?"}); err == nil || !strings.Contains(err.Error(), "give it one with AS") {
		t.Errorf("an unnamed column: got %v", err)
	}
}
