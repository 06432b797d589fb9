package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

func TestJSON_EncodesWhenTheStatementRuns(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine)
		at := store.Now(nil)
		if err := insertOp(ctx, db, engine, "a", at, store.JSON(map[string]any{"kind": "test", "n": 1})); err != nil {
			t.Fatalf("insert: %v", err)
		}
		row, err := readOp(ctx, db, engine, "a")
		if err != nil {
			t.Fatalf("select: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(row.meta, &m); err != nil || m["kind"] != "test" || m["n"] != 1.0 {
			t.Errorf("metadata = %s (%v), want the value written", row.meta, err)
		}
		if !row.created.Equal(at) {
			t.Errorf("create_time = %v, want %v (store.Now reads back equal)", row.created, at)
		}

		// A value that does not encode fails the call, not the process,
		// and nothing is written.
		unencodable := store.JSON(map[string]any{"f": func() {}})
		if err := insertOp(ctx, db, engine, "b", at, unencodable); err == nil {
			t.Error("Exec with an unencodable JSON argument succeeded")
		}
		if _, err := readOp(ctx, db, engine, "b"); err == nil {
			t.Error("the failed insert wrote a row")
		}
		query := `SELECT COUNT(*) FROM operations WHERE metadata = ?`
		if engine == store.Postgres {
			query = `SELECT COUNT(*) FROM operations WHERE metadata = $1`
		}
		var n int
		if err := db.QueryRow(ctx, query, unencodable).Scan(&n); err == nil {
			t.Error("QueryRow with an unencodable JSON argument succeeded")
		}
		if _, err := db.Query(ctx, query, unencodable); err == nil {
			t.Error("Query with an unencodable JSON argument succeeded")
		}
	})
}

func TestNow_UTCAtMicrosecondsAndDefaultsToTimeNow(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 5, 6, 7, 891234567, time.FixedZone("x", 3600))
	got := store.Now(func() time.Time { return at })
	if want := time.Date(2026, 3, 4, 4, 6, 7, 891234000, time.UTC); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("Now = %v, want %v", got, want)
	}
	before := time.Now().Add(-time.Second)
	if got := store.Now(nil); got.Before(before) || got.Location() != time.UTC || got.Nanosecond()%1000 != 0 {
		t.Errorf("Now(nil) = %v, want the current time in UTC at microseconds", got)
	}
}

func TestStrings_IsOneSetArgumentOnBothEngines(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine)
		at := store.Now(nil)
		for _, id := range []string{"a", "b", "c"} {
			if err := insertOp(ctx, db, engine, id, at, store.JSON(nil)); err != nil {
				t.Fatalf("insert %s: %v", id, err)
			}
		}
		query := `SELECT COUNT(*) FROM operations WHERE id IN (SELECT value FROM json_each(?))`
		if engine == store.Postgres {
			query = `SELECT COUNT(*) FROM operations WHERE id = ANY($1::text[])`
		}
		for _, tc := range []struct {
			ids  []string
			want int
		}{{[]string{"a", "c", "zz"}, 2}, {nil, 0}, {[]string{`"quoted"`, "b"}, 1}} {
			var n int
			if err := db.QueryRow(ctx, query, store.Strings(tc.ids)).Scan(&n); err != nil {
				t.Fatalf("query %v: %v", tc.ids, err)
			}
			if n != tc.want {
				t.Errorf("rows in %v = %d, want %d", tc.ids, n, tc.want)
			}
		}
	})
}

// A LIMIT or OFFSET given as a bare parameter still limits, run again and
// again on a cached statement with other values (the SQLite driver writes
// it as a cast so that the statement is not prepared on every run).
func TestQuery_BareLimitParameterLimitsOnEveryRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, store.SQLite)
	at := store.Now(nil)
	for _, id := range []string{"a", "b", "c", "d"} {
		if err := insertOp(ctx, db, store.SQLite, id, at, store.JSON(map[string]any{})); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		limit, offset int
		want          string
	}{{2, 0, "ab"}, {3, 1, "bcd"}, {1, 3, "d"}, {2, 0, "ab"}} {
		rows, err := db.Query(ctx, "SELECT id FROM operations ORDER BY id LIMIT ? OFFSET ?", tc.limit, tc.offset)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			got += id
		}
		rows.Close()
		if got != tc.want {
			t.Errorf("LIMIT %d OFFSET %d: %q, want %q", tc.limit, tc.offset, got, tc.want)
		}
	}
}
