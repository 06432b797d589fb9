package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/store"
)

// ParsePage reads `max_page_size` and `page_token` (API.md, Conventions):
// absent or 0 → 50; above 1000 → 1000 (AEP-158 coerces rather than refuses);
// negative or not a number → 400 INVALID_ARGUMENT; a token this list did
// not issue → 400 INVALID_PAGE_TOKEN.
//
// A page token is signed (HMAC-SHA256 under the API's PageKey) over the
// list's route, the request's project, its filters (every other query
// parameter) and the position: the returned PageRequest's After was checked
// against this request, and its Seal signs the next page's token for it, so
// a handler passes the PageRequest on and signs nothing itself.
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
	key := infoFrom(r.Context()).pageKey
	if key == nil {
		return p, errors.New("page tokens: the request did not come through an API (no page key)")
	}
	scope := pageScope(r.Pattern, auth.ProjectFrom(r.Context()), q)
	p.Seal = func(c store.Cursor) string { return sealCursor(key, scope, c) }
	if tok := q.Get("page_token"); tok != "" {
		c, err := openCursor(key, scope, tok)
		if err != nil {
			return p, err
		}
		p.After = c
	}
	return p, nil
}

// pageTagSize is the size of a page token's MAC, at its end.
const pageTagSize = sha256.Size

// pageScope is what a page token is valid for besides its position: the
// route pattern, the project and the filters, each length-prefixed. The
// filters are the query but for page_token and max_page_size (a client may
// change its page size between pages, AEP-158) and empty values (absent
// and empty filter alike), in url.Values.Encode's order (by name).
func pageScope(route, project string, q url.Values) []byte {
	filters := url.Values{}
	for name, values := range q {
		if name == "page_token" || name == "max_page_size" {
			continue
		}
		for _, v := range values {
			if v != "" {
				filters.Add(name, v)
			}
		}
	}
	b := []byte("steward page token v1")
	for _, part := range []string{route, project, filters.Encode()} {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	return b
}

// sealCursor makes the token of c for scope: the cursor's JSON, then the
// MAC of scope and that JSON, in unpadded base64url.
func sealCursor(key, scope []byte, c store.Cursor) string {
	body, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(append(body, pageTag(key, scope, body)...))
}

// openCursor reads a token sealCursor made for scope; any other (forged,
// truncated, or made for another list, project or filters) is
// ErrInvalidPageToken.
func openCursor(key, scope []byte, token string) (*store.Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) <= pageTagSize {
		return nil, ErrInvalidPageToken
	}
	body, tag := b[:len(b)-pageTagSize], b[len(b)-pageTagSize:]
	if !hmac.Equal(tag, pageTag(key, scope, body)) {
		return nil, ErrInvalidPageToken
	}
	var c store.Cursor
	if err := json.Unmarshal(body, &c); err != nil || c.ID == "" {
		return nil, ErrInvalidPageToken
	}
	return &c, nil
}

func pageTag(key, scope, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(scope)
	m.Write(body)
	return m.Sum(nil)
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

// QueryOrderBy reads AEP-132's `order_by` of a list kept in the order of
// field, then id: absent or field is oldest first (false), "field desc"
// newest first (true); anything else, empty or a repeat included, is 400
// INVALID_ARGUMENT naming order_by. The order is one of the list's
// parameters, so a page token is signed for it (pageScope): a token of
// one order is INVALID_PAGE_TOKEN with the other.
func QueryOrderBy(r *http.Request, field string) (desc bool, err error) {
	values := r.URL.Query()["order_by"]
	switch {
	case len(values) == 0 || len(values) == 1 && values[0] == field:
		return false, nil
	case len(values) > 1:
		return false, invalid.New("order_by", "must be given once")
	case values[0] == field+" desc":
		return true, nil
	default:
		return false, invalid.New("order_by", "must be %q (oldest first) or %q (newest first), not %q",
			field, field+" desc", values[0])
	}
}
