package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/store"
)

// DecodeJSON reads a JSON request body into dst. It does not check for
// unknown fields: the spec validator refuses them where the OpenAPI
// document closes a body (additionalProperties: false), and a body the
// document leaves open (a provider's report) may carry members dst does not
// have, which are ignored. It returns ErrBodyTooLarge past the limit, ErrMalformedJSON for
// broken JSON or an empty body, ErrUnsupportedMediaType for a non-JSON
// Content-Type, and an *invalid.Error naming the field for a wrong type.
func DecodeJSON(r *http.Request, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && mt != "application/merge-patch+json") {
			return ErrUnsupportedMediaType
		}
	}
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return decodeError(err)
		}
		return fmt.Errorf("%w: more than one JSON value", ErrMalformedJSON)
	}
	return nil
}

func decodeError(err error) error {
	var maxErr *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &maxErr):
		return ErrBodyTooLarge
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "body"
		}
		return invalid.New(field, "must be %s, not %s", typeErr.Type.Kind(), typeErr.Value)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: the body is empty", ErrMalformedJSON)
	default:
		return fmt.Errorf("%w: %v", ErrMalformedJSON, err)
	}
}

// pageAppender is a page of a list ([store.Page]), which appends itself
// cut at a size (its AppendJSON).
type pageAppender interface {
	AppendJSON(b []byte, maxBytes int) ([]byte, error)
}

// WriteJSON writes v as the JSON body with status. A page of a list
// ([store.Page]) is cut short of [store.MaxPageBytes], its token then
// naming the page that goes on from there (API.md, Conventions).
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	buf := responseBuffers.Get().(*bytes.Buffer)
	defer putResponseBuffer(buf)
	buf.Reset()
	if page, ok := v.(pageAppender); ok {
		b, err := page.AppendJSON(buf.AvailableBuffer(), store.MaxPageBytes)
		if err != nil {
			return fmt.Errorf("encode response: %w", err)
		}
		buf.Write(append(b, '\n')) // as Encode ends it
	} else if err := json.NewEncoder(buf).Encode(v); err != nil { // Encode ends it with a newline
		return fmt.Errorf("encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// responseBuffers reuses the buffers responses are encoded into: a page of
// 100 orders is about 100 KB, allocated and collected anew on every list
// before.
var responseBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func putResponseBuffer(b *bytes.Buffer) {
	if b.Cap() <= 4<<20 { // an outsized one is left to the collector
		responseBuffers.Put(b)
	}
}

// WriteJSONAppend writes the JSON body appendBody appends to a pooled
// buffer, with status. It is for the hottest responses (a page of orders),
// whose values are appended by hand: encoding/json would reflect over them
// and validate again every stored JSON document they pass through.
// appendBody must append exactly one valid JSON value.
func WriteJSONAppend(w http.ResponseWriter, status int, appendBody func(b []byte) []byte) {
	bp := appendBuffers.Get().(*[]byte)
	b := append(appendBody((*bp)[:0]), '\n') // as Encode ends it
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
	if cap(b) <= 4<<20 { // an outsized one is left to the collector
		*bp = b
		appendBuffers.Put(bp)
	}
}

var appendBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// AppendString appends s as a JSON string, escaped as encoding/json does:
// quotes, backslashes and control characters; <, > and & (HTML-safe);
// U+2028 and U+2029; invalid UTF-8 becomes U+FFFD.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
