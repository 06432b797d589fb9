package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

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
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	return nil
}
