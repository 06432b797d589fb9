package store

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"time"
)

// Page size limits shared by every list (API.md, Conventions).
const (
	DefaultPageSize = 50
	MaxPageSize     = 1000
)

// MaxPageBytes caps one page of a list in bytes as MaxPageSize caps it in
// rows (API.md, Conventions; security.md, Limits): a list reads rows only
// until their data passes it ([ListPage]), and an answer stops adding
// results before its encoding would pass it ([Page.AppendJSON]), ending
// with the token of the page that follows. A page always holds at least
// one result, whatever its size, so that a client paging on gets to the
// end.
const MaxPageBytes = 4 << 20

// PageRequest asks for one page of a keyset-paginated list.
type PageRequest struct {
	// Size is the number of results wanted, 1 to MaxPageSize.
	Size int
	// After is the position of the last row of the previous page; nil for the first page.
	After *Cursor
	// Backward walks the list newest first, by (Time, ID) descending: a
	// query for it keeps the rows before the keyset ((t, id) < (?, ?))
	// and its first page starts after every row ([PageRequest.Keyset]).
	Backward bool
	// Seal makes the token a client is given for the next page. nil makes
	// [Cursor.Token]'s unsigned one, for a domain paging through its own
	// list; httpapi.ParsePage sets it to sign the token for the request's
	// list, project and filters (API.md, Conventions).
	Seal func(Cursor) string
}

// Cursor is a position in a list ordered by (Time, ID). Lists sort by
// creation time then id, so rows inserted while a client pages never shift
// the pages it has not read yet (which offsets would).
type Cursor struct {
	Time time.Time `json:"t"`
	ID   string    `json:"i"`
}

// Token encodes the cursor as an unsigned page token: for the lists a
// domain pages through itself, never for a client (see PageRequest.Seal).
func (c Cursor) Token() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads a page token made by [Cursor.Token]. Anything else gives
// ErrInvalidPageToken.
func DecodeCursor(token string) (*Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, ErrInvalidPageToken
	}
	var c Cursor
	if err := json.Unmarshal(b, &c); err != nil || c.ID == "" || c.Time.IsZero() {
		return nil, ErrInvalidPageToken
	}
	return &c, nil
}

// Keyset returns the (time, id) to query after: for a first page the zero
// time and "", which sort before every row, or when Backward the last
// instant the store keeps (endOfTime) and "", after every row.
func (p PageRequest) Keyset() (time.Time, string) {
	switch {
	case p.After == nil && p.Backward:
		return endOfTime, ""
	case p.After == nil:
		return time.Time{}, ""
	}
	return p.After.Time, p.After.ID
}

// token makes the next page's token at c, as p.Seal says.
func (p PageRequest) token(c Cursor) string {
	if p.Seal != nil {
		return p.Seal(c)
	}
	return c.Token()
}

// endOfTime is where a first page of a Backward list starts: the last
// microsecond of year 9999, the latest time both engines keep alike
// (SQLite as fixed-width text), after any row's.
var endOfTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)

// Page is one page of results and the token for the next ("" at the end).
type Page[T any] struct {
	Results       []T    `json:"results"`
	NextPageToken string `json:"next_page_token"`
	// after makes the token of the page that follows Results[i], so that
	// an answer may end the page early ([Page.Cut]); nil on a page built
	// by hand, which cannot be cut.
	after func(i int) string
}

// NewPage trims rows fetched with LIMIT Size+1 (Size 0: DefaultPageSize)
// to one page and makes the next token from the last kept row when there
// was more, sealed by page.Seal.
func NewPage[T any](rows []T, page PageRequest, cursor func(T) Cursor) Page[T] {
	size := cmp.Or(page.Size, DefaultPageSize)
	return newPage(rows[:min(len(rows), size)], len(rows) > size, page, cursor)
}

// newPage is the page of rows, followed by more when more is true.
func newPage[T any](rows []T, more bool, page PageRequest, cursor func(T) Cursor) Page[T] {
	p := Page[T]{Results: rows, after: func(i int) string { return page.token(cursor(rows[i])) }}
	if p.Results == nil {
		p.Results = []T{}
	}
	if more && len(rows) > 0 {
		p.NextPageToken = p.after(len(rows) - 1)
	}
	return p
}

// Cut returns the page ended after its first n results (at least one),
// with the token of the page that follows them: what an answer sends when
// the whole page would pass [MaxPageBytes]. A page with at most n results,
// or one that cannot be cut (not made by [NewPage] or [MapPage] of one),
// is returned as it is.
func (p Page[T]) Cut(n int) Page[T] {
	n = max(n, 1)
	if n >= len(p.Results) || p.after == nil {
		return p
	}
	return Page[T]{Results: p.Results[:n], NextPageToken: p.after(n - 1), after: p.after}
}

// MapPage converts a page's results, keeping its token and what cuts it.
func MapPage[T, V any](p Page[T], f func(T) V) Page[V] {
	out := Page[V]{Results: make([]V, len(p.Results)), NextPageToken: p.NextPageToken, after: p.after}
	for i, v := range p.Results {
		out.Results[i] = f(v)
	}
	return out
}

// AppendJSON appends the page as encoding/json encodes it ({"results":
// […], "next_page_token": "…"}), each result encoded by encoding/json,
// but cut ([Page.Cut]) before the result whose encoding would take the
// answer past maxBytes. httpapi.WriteJSON writes every page this way.
func (p Page[T]) AppendJSON(b []byte, maxBytes int) ([]byte, error) {
	var err error
	b = AppendPageJSON(b, p, maxBytes, func(v T, b []byte) []byte {
		if err != nil {
			return b
		}
		var enc []byte
		if enc, err = json.Marshal(&v); err != nil { // addressable, as a slice's items are
			return b
		}
		return append(b, enc...)
	})
	return b, err
}

// pageTokenRoom is what AppendPageJSON keeps free for the next page's
// token and the closing bytes: a signed token is about 150 bytes.
const pageTokenRoom = 1 << 10

// AppendPageJSON appends page as the list answer, each result appended by
// appendItem, cut ([Page.Cut]) before the result that would take what it
// appended past maxBytes; the first result is always kept. Of the results
// it drops, only the first is encoded (to be measured).
func AppendPageJSON[T any](b []byte, page Page[T], maxBytes int, appendItem func(T, []byte) []byte) []byte {
	start := len(b)
	b = append(b, `{"results":[`...)
	for i, v := range page.Results {
		mark := len(b)
		if i > 0 {
			b = append(b, ',')
		}
		b = appendItem(v, b)
		if i > 0 && page.after != nil && len(b)-start+pageTokenRoom > maxBytes {
			b = b[:mark]
			page = page.Cut(i)
			break
		}
	}
	b = append(b, `],"next_page_token":`...)
	tok, _ := json.Marshal(page.NextPageToken)
	b = append(b, tok...)
	return append(b, '}')
}
