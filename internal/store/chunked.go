package store

import "strings"

// ChunkRows is the most rows one [Chunked] statement writes. A batch is
// written in chunks of it and of its halves (256, 128, …, 1), so each
// statement has only nine forms to prepare.
const ChunkRows = 256

// Chunked is a SQLite batch statement as multi-row VALUES, in each chunk
// size. It replaces passing a batch as one JSON array, which json_each and
// json_extract parse back row by row. (PostgreSQL takes a batch as one
// array a column, unnest: neither JSON nor a thousand parameters.)
type Chunked struct {
	cols  int
	lead  int
	forms []string // forms[k] has ChunkRows>>k rows
}

// NewChunked builds the forms of a statement: wrap places the
// "VALUES (?, …), (…)" list in it. The statement's own parameters (lead of
// them) must all come before the list; each row has cols. Parameters are
// anonymous: modernc looks every parameter's name up, and SQLite finds a
// numbered one's by a walk of them all, quadratic in a chunk's 1,024 (20%
// of a sentinel cycle).
func NewChunked(lead, cols int, wrap func(values string) string) Chunked {
	c := Chunked{cols: cols, lead: lead}
	row := "(" + strings.Repeat("?,", cols-1) + "?)"
	for n := ChunkRows; n >= 1; n /= 2 {
		c.forms = append(c.forms, wrap("VALUES "+strings.Repeat(row+",", n-1)+row))
	}
	return c
}

// Each runs fn on the chunks of n rows in order, with the statement and
// its arguments: lead, then row(i, args) of each row i of the chunk (its
// cols values appended to args).
func (c Chunked) Each(n int, lead []any, row func(i int, args []any) []any, fn func(query string, args []any) error) error {
	for start := 0; start < n; {
		k := 0
		for ChunkRows>>k > n-start {
			k++
		}
		size := ChunkRows >> k
		args := make([]any, 0, c.lead+size*c.cols)
		args = append(args, lead...)
		for i := start; i < start+size; i++ {
			args = row(i, args)
		}
		if err := fn(c.forms[k], args); err != nil {
			return err
		}
		start += size
	}
	return nil
}
