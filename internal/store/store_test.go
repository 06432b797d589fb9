package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// insertOp writes an operations row with the given engine's placeholders.
func insertOp(ctx context.Context, q store.Querier, engine store.Engine, id string, at time.Time, meta any) error {
	query := `INSERT INTO operations (id, project, kind, target, done, metadata, create_time, update_time) VALUES (?, 'p', 'k', 't', ?, ?, ?, ?)`
	if engine == store.Postgres {
		query = `INSERT INTO operations (id, project, kind, target, done, metadata, create_time, update_time) VALUES ($1, 'p', 'k', 't', $2, $3, $4, $5)`
	}
	_, err := q.Exec(ctx, query, id, false, meta, at, at)
	return err
}

// opRow is the part of an operations row readOp reads.
type opRow struct {
	done       bool
	meta, resp json.RawMessage
	created    time.Time
}

// readOp reads the operations row id with the given engine's placeholders.
func readOp(ctx context.Context, q store.Querier, engine store.Engine, id string) (opRow, error) {
	query := `SELECT done, metadata, create_time, response FROM operations WHERE id = ?`
	if engine == store.Postgres {
		query = `SELECT done, metadata, create_time, response FROM operations WHERE id = $1`
	}
	var r opRow
	err := q.QueryRow(ctx, query, id).Scan(&r.done, &r.meta, &r.created, &r.resp)
	return r, err
}

func TestStore_RoundTripsTimesJSONAndErrors(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine)
		at := time.Date(2026, 11, 22, 10, 4, 5, 123456789, time.FixedZone("x", 3600))
		if err := insertOp(ctx, db, engine, "a", at, json.RawMessage(`{"kind":"test","n":1}`)); err != nil {
			t.Fatalf("insert: %v", err)
		}

		row, err := readOp(ctx, db, engine, "a")
		if err != nil {
			t.Fatalf("select: %v", err)
		}
		if want := at.UTC().Truncate(time.Microsecond); !row.created.Equal(want) || row.created.Location() != time.UTC {
			t.Errorf("create_time = %v, want %v in UTC", row.created, want)
		}
		var m map[string]any
		if err := json.Unmarshal(row.meta, &m); err != nil || m["kind"] != "test" {
			t.Errorf("metadata = %s (%v), want the JSON written", row.meta, err)
		}
		if row.resp != nil {
			t.Errorf("NULL response scanned as %q, want nil", row.resp)
		}

		err = insertOp(ctx, db, engine, "a", at, json.RawMessage(`{}`))
		if !errors.Is(err, store.ErrAlreadyExists) {
			t.Errorf("duplicate insert: err = %v, want ErrAlreadyExists", err)
		}
		_, err = readOp(ctx, db, engine, "missing")
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("select missing: err = %v, want ErrNotFound", err)
		}
		mark := `INSERT INTO sentinel_marks (order_id, generation, evaluated_time, evaluated_generation, ready)
			VALUES (?, 1, ?, 1, ?)`
		if engine == store.Postgres {
			mark = `INSERT INTO sentinel_marks (order_id, generation, evaluated_time, evaluated_generation, ready)
			VALUES ($1, 1, $2, 1, $3)`
		}
		if _, err := db.Exec(ctx, mark, "no-such-order", at, false); !errors.Is(err, store.ErrNoReferent) {
			t.Errorf("insert referring to no row: err = %v, want ErrNoReferent", err)
		}
	})
}

func TestStore_InTxRollsBackOnErrorAndPanic(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine)
		now := time.Now()
		boom := errors.New("boom")
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := insertOp(ctx, tx, engine, "rolled-back", now, json.RawMessage(`{}`)); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("InTx err = %v, want boom", err)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Error("panic inside InTx was swallowed")
				}
			}()
			_ = db.InTx(ctx, func(tx *store.Tx) error {
				if err := insertOp(ctx, tx, engine, "panicked", now, json.RawMessage(`{}`)); err != nil {
					return err
				}
				panic("boom")
			})
		}()
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			return insertOp(ctx, tx, engine, "committed", now, json.RawMessage(`{}`))
		}); err != nil {
			t.Fatalf("InTx commit: %v", err)
		}
		for id, wantErr := range map[string]error{"rolled-back": store.ErrNotFound, "panicked": store.ErrNotFound, "committed": nil} {
			_, err := readOp(ctx, db, engine, id)
			if !errors.Is(err, wantErr) {
				t.Errorf("row %q: err = %v, want %v", id, err, wantErr)
			}
		}
	})
}

func TestStore_MigrateTwiceIsANoOp(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		calls := 0
		extra := store.Migrator{Component: "extra", Up: func(context.Context, *store.DB) ([]store.Migration, error) {
			calls++
			return nil, nil
		}}
		applied, err := db.Migrate(context.Background(), extra)
		if err != nil {
			t.Fatalf("second migrate: %v", err)
		}
		if len(applied) != 0 {
			t.Errorf("second migrate applied %v, want nothing", applied)
		}
		if calls != 1 {
			t.Errorf("extra migrator ran %d times, want 1", calls)
		}
	})
}

func TestLoadQueries_SplitsByHeaderAndRefusesDuplicates(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"sql/sqlite/a.sql":   {Data: []byte("-- name: AGet :one\nSELECT 1\nFROM x;\n\n-- name: AList :many\nSELECT 2;\n")},
		"sql/sqlite/b.sql":   {Data: []byte("-- name: AGet :one\nSELECT 3;\n")},
		"sql/postgres/a.sql": {Data: []byte("-- name: AGet :one\nSELECT $1;\n")},
	}
	if _, err := store.LoadQueries(fsys, "sql", store.SQLite); err == nil {
		t.Error("a query defined twice was accepted")
	}
	qs, err := store.LoadQueries(fsys, "sql", store.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if got := qs.Get("AGet"); got != "SELECT $1;" {
		t.Errorf("AGet = %q", got)
	}
	delete(fsys, "sql/sqlite/b.sql")
	qs, err = store.LoadQueries(fsys, "sql", store.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if got := qs.Get("AGet"); got != "SELECT 1\nFROM x;" {
		t.Errorf("AGet = %q", got)
	}
	if got := qs.Names(); len(got) != 2 {
		t.Errorf("names = %v", got)
	}
}

func TestCursor_TokenRoundTripAndGarbage(t *testing.T) {
	t.Parallel()
	c := store.Cursor{Time: time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC), ID: "x"}
	got, err := store.DecodeCursor(c.Token())
	if err != nil || !got.Time.Equal(c.Time) || got.ID != "x" {
		t.Errorf("round trip = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "!!", "e30", "bm90IGpzb24"} {
		if _, err := store.DecodeCursor(bad); !errors.Is(err, store.ErrInvalidPageToken) {
			t.Errorf("DecodeCursor(%q) err = %v, want ErrInvalidPageToken", bad, err)
		}
	}
}
