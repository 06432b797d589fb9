package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Appender inserts rows into an append-only table (the audit log) as part of
// a transaction. In a SQLite group commit the rows of every member that
// succeeded are written together, in one multi-row INSERT per
// maxAppendRows, just before the group's COMMIT: the single writer runs one
// statement for the group, not one per request, which is what keeps an
// audit record per request off the writer's critical path. A member that
// fails takes its rows with it, as a savepoint would; a failing INSERT fails
// the whole group, which then commits nothing. On PostgreSQL (and outside a
// group) a row is inserted at once.
type Appender struct {
	table string
	cols  []string
}

// NewAppender returns an Appender into table's cols.
func NewAppender(table string, cols ...string) *Appender {
	return &Appender{table: table, cols: cols}
}

// maxAppendRows bounds the rows of one INSERT, far below SQLite's limit of
// 32,766 parameters for the widest table.
const maxAppendRows = 64

// pendingRow is a row appended in a group, written at its end.
type pendingRow struct {
	a    *Appender
	vals []any
}

// Append adds a row of values, one per column, to tx.
func (tx *Tx) Append(ctx context.Context, a *Appender, values ...any) error {
	if len(values) != len(a.cols) {
		return fmt.Errorf("store: append to %s: %d values for %d columns", a.table, len(values), len(a.cols))
	}
	for i, v := range values {
		// The only way an append to a table without unique keys can fail
		// is a NULL in a NOT NULL column: refuse it here, in the member,
		// rather than at the group's end, which would fail every member.
		if v == nil {
			return fmt.Errorf("store: append to %s: %s is nil", a.table, a.cols[i])
		}
	}
	if tx.grouped {
		tx.pending = append(tx.pending, pendingRow{a: a, vals: values})
		return nil
	}
	_, err := tx.Exec(ctx, a.insert(1, tx.Engine()), values...)
	return err
}

// insert is the statement that inserts n rows.
func (a *Appender) insert(n int, engine Engine) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(a.table)
	b.WriteString(" (")
	b.WriteString(strings.Join(a.cols, ", "))
	b.WriteString(") VALUES ")
	arg := 0
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j := range a.cols {
			if j > 0 {
				b.WriteString(", ")
			}
			arg++
			if engine == Postgres {
				b.WriteString("$" + strconv.Itoa(arg))
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// flushAppends writes a group's pending rows, consecutive rows of one
// Appender in one statement.
func (tx *Tx) flushAppends(ctx context.Context) error {
	rows := tx.pending
	tx.pending = nil
	for len(rows) > 0 {
		a, n := rows[0].a, 1
		for n < len(rows) && n < maxAppendRows && rows[n].a == a {
			n++
		}
		args := make([]any, 0, n*len(a.cols))
		for _, r := range rows[:n] {
			args = append(args, r.vals...)
		}
		if _, err := tx.Exec(ctx, a.insert(n, SQLite), args...); err != nil {
			return fmt.Errorf("store: append %d rows to %s: %w", n, a.table, err)
		}
		rows = rows[n:]
	}
	return nil
}
