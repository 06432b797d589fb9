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

// PageRequest asks for one page of a keyset-paginated list.
type PageRequest struct {
	// Size is the number of results wanted, 1 to MaxPageSize.
	Size int
	// After is the position of the last row of the previous page; nil for the first page.
	After *Cursor
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

// Keyset returns the (time, id) to query after: the zero time and "" for a
// first page, which sort before every row.
func (p PageRequest) Keyset() (time.Time, string) {
	if p.After == nil {
		return time.Time{}, ""
	}
	return p.After.Time, p.After.ID
}

// Page is one page of results and the token for the next ("" at the end).
type Page[T any] struct {
	Results       []T    `json:"results"`
	NextPageToken string `json:"next_page_token"`
}

// NewPage trims rows fetched with LIMIT Size+1 (Size 0: DefaultPageSize)
// to one page and makes the next token from the last kept row when there
// was more, sealed by page.Seal.
func NewPage[T any](rows []T, page PageRequest, cursor func(T) Cursor) Page[T] {
	size := cmp.Or(page.Size, DefaultPageSize)
	p := Page[T]{Results: rows}
	if p.Results == nil {
		p.Results = []T{}
	}
	if len(rows) > size {
		p.Results = rows[:size]
		if page.Seal != nil {
			p.NextPageToken = page.Seal(cursor(rows[size-1]))
		} else {
			p.NextPageToken = cursor(rows[size-1]).Token()
		}
	}
	return p
}

// MapPage converts a page's results, keeping its token.
func MapPage[T, V any](p Page[T], f func(T) V) Page[V] {
	out := Page[V]{Results: make([]V, len(p.Results)), NextPageToken: p.NextPageToken}
	for i, v := range p.Results {
		out.Results[i] = f(v)
	}
	return out
}
