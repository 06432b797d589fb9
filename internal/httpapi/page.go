package httpapi

import (
	"net/http"
	"strconv"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/store"
)

// ParsePage reads `max_page_size` and `page_token` (API.md, Conventions):
// absent or 0 → 50; above 1000 → 1000 (AEP-158 coerces rather than refuses);
// negative or not a number → 400 INVALID_ARGUMENT; a token this server did
// not issue → 400 INVALID_PAGE_TOKEN.
func ParsePage(r *http.Request) (store.PageRequest, error) {
	q := r.URL.Query()
	p := store.PageRequest{Size: store.DefaultPageSize}
	if s := q.Get("max_page_size"); s != "" {
		n, err := strconv.Atoi(s)
		switch {
		case err != nil:
			return p, invalid.New("max_page_size", "must be a whole number")
		case n < 0:
			return p, invalid.New("max_page_size", "must not be negative")
		case n > store.MaxPageSize:
			p.Size = store.MaxPageSize
		case n > 0:
			p.Size = n
		}
	}
	if tok := q.Get("page_token"); tok != "" {
		c, err := store.DecodeCursor(tok)
		if err != nil {
			return p, ErrInvalidPageToken
		}
		p.After = c
	}
	return p, nil
}

// QueryBool reads an optional boolean filter; nil when absent.
func QueryBool(r *http.Request, name string) (*bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return nil, invalid.New(name, "must be true or false")
	}
	return &b, nil
}

// QueryFlag reads an optional boolean parameter that defaults to false
// (show_deleted, deferred).
func QueryFlag(r *http.Request, name string) (bool, error) {
	b, err := QueryBool(r, name)
	return b != nil && *b, err
}
