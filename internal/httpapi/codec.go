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

	"github.com/stewardhq/steward/internal/invalid"
)

// DecodeJSON reads a JSON request body into dst. Unknown fields are ignored
// (API.md). It returns ErrBodyTooLarge past the limit, ErrMalformedJSON for
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

// WriteJSON writes v as the JSON body with status.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	buf := responseBuffers.Get().(*bytes.Buffer)
	defer putResponseBuffer(buf)
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(v); err != nil { // Encode ends it with a newline
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
