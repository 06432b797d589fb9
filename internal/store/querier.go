package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Querier runs statements. Both [*DB] (one statement, autocommit) and [*Tx]
// implement it, so a store helper can take either.
type Querier interface {
	// Exec runs a statement and returns the number of rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Query runs a statement that returns rows. The caller closes the Rows.
	Query(ctx context.Context, query string, args ...any) (*Rows, error)
	// QueryRow runs a statement expected to return at most one row; its Scan
	// returns ErrNotFound when there was none.
	QueryRow(ctx context.Context, query string, args ...any) *Row
}

// Rows iterates a query's result. It is not safe for concurrent use.
type Rows struct {
	lite *sql.Rows
	pg   pgx.Rows
}

// Next prepares the next row for Scan and reports whether there is one.
func (r *Rows) Next() bool {
	if r.lite != nil {
		return r.lite.Next()
	}
	return r.pg.Next()
}

// Scan copies the current row into dest. Besides the drivers' own targets it
// accepts *time.Time, **time.Time (nullable) and *json.RawMessage on both engines.
func (r *Rows) Scan(dest ...any) error {
	if r.lite != nil {
		return scanLite(r.lite.Scan, dest)
	}
	return scanPG(r.pg.Scan, dest)
}

// Err returns the error, if any, met during iteration.
func (r *Rows) Err() error {
	if r.lite != nil {
		return classify(r.lite.Err())
	}
	return classify(r.pg.Err())
}

// Close releases the rows. It is safe to call more than once.
func (r *Rows) Close() {
	if r.lite != nil {
		r.lite.Close()
		return
	}
	r.pg.Close()
}

// Row is the result of QueryRow.
type Row struct {
	lite *sql.Row
	pg   pgx.Row
	err  error
}

// Scan copies the row into dest, as [Rows.Scan]; no row gives ErrNotFound.
func (r *Row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if r.lite != nil {
		return classify(scanLite(r.lite.Scan, dest))
	}
	return scanPG(r.pg.Scan, dest)
}

// scanPG scans and normalises times to UTC, as SQLite gives them.
func scanPG(scan func(...any) error, dest []any) error {
	for i, d := range dest {
		// pgx decodes a json.RawMessage through json.Unmarshal, which
		// validates the document again; as a []byte it copies the bytes.
		if raw, ok := d.(*json.RawMessage); ok {
			dest[i] = (*[]byte)(raw)
		}
	}
	if err := scan(dest...); err != nil {
		return classify(err)
	}
	for _, d := range dest {
		switch d := d.(type) {
		case *time.Time:
			*d = d.UTC()
		case **time.Time:
			if *d != nil {
				t := (*d).UTC()
				*d = &t
			}
		}
	}
	return nil
}

// liteQuerier adapts database/sql (SQLite) to Querier.
type liteQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func liteExec(ctx context.Context, q liteQuerier, query string, args []any) (int64, error) {
	args, err := liteArgs(args)
	if err != nil {
		return 0, err
	}
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, classify(err)
	}
	return res.RowsAffected()
}

func liteQuery(ctx context.Context, q liteQuerier, query string, args []any) (*Rows, error) {
	args, err := liteArgs(args)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, classify(err)
	}
	return &Rows{lite: rows}, nil
}

func liteQueryRow(ctx context.Context, q liteQuerier, query string, args []any) *Row {
	args, err := liteArgs(args)
	if err != nil {
		return &Row{err: err}
	}
	return &Row{lite: q.QueryRowContext(ctx, query, args...)}
}

// pgQuerier is what pgxpool.Pool and pgx.Tx have in common.
type pgQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func pgExec(ctx context.Context, q pgQuerier, query string, args []any) (int64, error) {
	args, err := pgArgs(args)
	if err != nil {
		return 0, err
	}
	args = planPerCall(query, args)
	tag, err := q.Exec(ctx, query, args...)
	if err != nil {
		return 0, classify(err)
	}
	return tag.RowsAffected(), nil
}

// PlanPerCall, as a line of a PostgreSQL query's text, has the query
// planned for its arguments on every call (an unnamed statement, pgx's
// exec mode: parameters typed by their Go types, sent and answered as
// text, in one round trip) instead of by the generic plan PostgreSQL
// settles on after five. A list whose filters each match anything when
// their argument is empty is planned, generically, as if every filter were
// set: it then reads and sorts every row after the page token (20 ms for the first page of 10,000
// orders); planned per call it walks its index (under 1 ms). pgx's
// describe-exec mode, tried first, took a second round trip per call and
// halved a list's rate.
const PlanPerCall = "-- plan: per call"

// planPerCall puts pgx's exec mode before args when query is
// marked PlanPerCall.
func planPerCall(query string, args []any) []any {
	if strings.Contains(query, PlanPerCall) {
		return append([]any{pgx.QueryExecModeExec}, args...)
	}
	return args
}

func pgQuery(ctx context.Context, q pgQuerier, query string, args []any) (*Rows, error) {
	args, err := pgArgs(args)
	if err != nil {
		return nil, err
	}
	args = planPerCall(query, args)
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, classify(err)
	}
	return &Rows{pg: rows}, nil
}

func pgQueryRow(ctx context.Context, q pgQuerier, query string, args []any) *Row {
	args, err := pgArgs(args)
	if err != nil {
		return &Row{err: err}
	}
	args = planPerCall(query, args)
	return &Row{pg: q.QueryRow(ctx, query, args...)}
}

// timeLayout is fixed width (always six fractional digits, always UTC) so that
// SQLite compares and sorts times correctly as text. Microseconds match
// PostgreSQL's timestamptz precision, so both engines round-trip the same value.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// FormatTime renders t the way the SQLite store keeps it.
func FormatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// scanLite scans through temporaries for the targets SQLite keeps as text.
func scanLite(scan func(...any) error, dest []any) error {
	type fixup struct {
		i   int
		tmp *sql.NullString
	}
	var fixups []fixup
	args := dest
	for i, d := range dest {
		switch d.(type) {
		case *time.Time, **time.Time, *json.RawMessage:
			if fixups == nil {
				args = append([]any(nil), dest...)
			}
			tmp := new(sql.NullString)
			args[i] = tmp
			fixups = append(fixups, fixup{i, tmp})
		}
	}
	if err := scan(args...); err != nil {
		return err
	}
	for _, f := range fixups {
		switch d := dest[f.i].(type) {
		case *time.Time:
			if !f.tmp.Valid {
				*d = time.Time{}
				continue
			}
			t, err := parseLiteTime(f.tmp.String)
			if err != nil {
				return err
			}
			*d = t
		case **time.Time:
			if !f.tmp.Valid {
				*d = nil
				continue
			}
			t, err := parseLiteTime(f.tmp.String)
			if err != nil {
				return err
			}
			*d = &t
		case *json.RawMessage:
			if !f.tmp.Valid {
				*d = nil
				continue
			}
			*d = json.RawMessage(f.tmp.String)
		}
	}
	return nil
}

func parseLiteTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("store: parse time %q: %w", s, err)
	}
	return t.UTC(), nil
}
