package store

import (
	"cmp"
	"context"
)

// Scanner is a row to scan: *Row and *Rows both are one.
type Scanner interface{ Scan(dest ...any) error }

// Collect reads every row with scan and closes rows.
func Collect[T any](rows *Rows, scan func(Scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ListPage runs a keyset list query whose last three parameters are the
// cursor (time, id) and the limit, after the filters, and returns one page
// (STYLE §9: keyset on (sort key, id), LIMIT n+1).
func ListPage[T any](ctx context.Context, q Querier, query string, page PageRequest,
	scan func(Scanner) (T, error), cursor func(T) Cursor, filters ...any) (Page[T], error) {
	size := cmp.Or(page.Size, DefaultPageSize)
	at, after := page.Keyset()
	rows, err := q.Query(ctx, query, append(filters, at, after, size+1)...)
	if err != nil {
		return Page[T]{}, err
	}
	items, err := Collect(rows, scan)
	if err != nil {
		return Page[T]{}, err
	}
	return NewPage(items, page, cursor), nil
}
