package store

import (
	"cmp"
	"context"
	"encoding/json"
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
// (STYLE §9: keyset on (sort key, id), LIMIT n+1). It stops reading rows
// once those it read hold more than [MaxPageBytes] of data, and ends the
// page there, so that a page of large rows is never read whole.
func ListPage[T any](ctx context.Context, q Querier, query string, page PageRequest,
	scan func(Scanner) (T, error), cursor func(T) Cursor, filters ...any) (Page[T], error) {
	size := cmp.Or(page.Size, DefaultPageSize)
	at, after := page.Keyset()
	rows, err := q.Query(ctx, query, append(filters, at, after, size+1)...)
	if err != nil {
		return Page[T]{}, err
	}
	items, more, err := collectPage(rows, scan, size, MaxPageBytes)
	if err != nil {
		return Page[T]{}, err
	}
	return newPage(items, more, page, cursor), nil
}

// collectPage reads up to size rows with scan, and fewer once they hold
// more than maxBytes (at least one), then closes rows. more says whether a
// row was left.
func collectPage[T any](rows *Rows, scan func(Scanner) (T, error), size, maxBytes int) (items []T, more bool, err error) {
	defer rows.Close()
	m := &measuredScanner{rows: rows}
	for rows.Next() {
		if len(items) == size || m.bytes > maxBytes {
			return items, true, rows.Err()
		}
		v, err := scan(m)
		if err != nil {
			return nil, false, err
		}
		items = append(items, v)
	}
	return items, false, rows.Err()
}

// measuredScanner counts the bytes of the rows it scans: the lengths of
// the strings, byte slices and JSON documents, and 8 bytes for any other
// value (a number, a time, a flag).
type measuredScanner struct {
	rows  *Rows
	bytes int
}

func (m *measuredScanner) Scan(dest ...any) error {
	if err := m.rows.Scan(dest...); err != nil {
		return err
	}
	for _, d := range dest {
		switch v := d.(type) {
		case *string:
			m.bytes += len(*v)
		case **string:
			if *v != nil {
				m.bytes += len(**v)
			}
		case *[]byte:
			m.bytes += len(*v)
		case *json.RawMessage:
			m.bytes += len(*v)
		case *any:
			switch s := (*v).(type) {
			case string:
				m.bytes += len(s)
			case []byte:
				m.bytes += len(s)
			default:
				m.bytes += 8
			}
		default:
			m.bytes += 8
		}
	}
	return nil
}
