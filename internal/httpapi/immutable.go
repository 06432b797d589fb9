package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/stewardhq/steward/internal/invalid"
)

// immutableMembers are the members a resource's schema lists under
// x-steward-immutable: fixed at create (its id, path and create_time, a
// policy's policy_type, an order's catalog_item_id…; AIP-203 IMMUTABLE).
func immutableMembers(resource *openapi3.Schema) map[string]bool {
	if resource == nil {
		return nil
	}
	list, _ := resource.Extensions["x-steward-immutable"].([]any)
	if len(list) == 0 {
		return nil
	}
	members := make(map[string]bool, len(list))
	for _, m := range list {
		if name, ok := m.(string); ok {
			members[name] = true
		}
	}
	return members
}

// checkImmutable refuses an update whose body gives an immutable member
// (named, as strip found them) another value than the resource has, with
// an [*invalid.ImmutableError] naming each: a silent 200 that kept the old
// value would tell the client its change was made. The same value is no
// change and passes, so a GET's answer can be sent back. The resource is
// read as a client reads it, by the GET handler of the update's path, in
// the request's context (its principal and project). A read that fails
// answers the request: the update would fail alike (404).
//
// NOTE: the read is not in the update's transaction. That is enough for
// members that never change; only a resource deleted and created again
// under its id between the read and the update escapes, and If-Match
// closes that.
func (a *API) checkImmutable(r *http.Request, pattern string, named map[string]json.RawMessage) error {
	if len(named) == 0 {
		return nil
	}
	_, path, _ := strings.Cut(pattern, " ")
	get := a.handlers[http.MethodGet+" "+path]
	if get == nil {
		return fmt.Errorf("httpapi: %s names immutable members but %s has no GET route to read them from", pattern, path)
	}
	read := r.Clone(r.Context())
	read.Method, read.Body, read.ContentLength = http.MethodGet, http.NoBody, 0
	read.URL.RawQuery = ""
	for _, h := range []string{"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"} {
		read.Header.Del(h)
	}
	rec := &bodyRecorder{header: http.Header{}}
	if err := get(rec, read); err != nil {
		return err
	}
	var current map[string]json.RawMessage
	if err := json.Unmarshal(rec.body.Bytes(), &current); err != nil {
		return fmt.Errorf("httpapi: read %s to check its immutable members: %w", path, err)
	}
	var refused *invalid.ImmutableError
	for _, name := range slices.Sorted(maps.Keys(named)) {
		now := orNull(current[name])
		if sameJSON(named[name], now) {
			continue
		}
		if refused == nil {
			refused = invalid.Immutable(name, now)
		} else {
			refused.Add(name, now)
		}
	}
	if refused == nil {
		return nil
	}
	return refused
}

// orNull is raw, or JSON null for a member the answer leaves out.
func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// sameJSON reports whether two JSON values are equal as values: member
// order and spacing aside, and two RFC 3339 strings equal when they name the
// same instant (a client may write create_time back in another precision
// or zone).
func sameJSON(a, b json.RawMessage) bool {
	va, errA := decodeNumbers(a)
	vb, errB := decodeNumbers(b)
	if errA != nil || errB != nil {
		return false
	}
	if sa, ok := va.(string); ok {
		if sb, ok := vb.(string); ok {
			ta, errA := time.Parse(time.RFC3339Nano, sa)
			tb, errB := time.Parse(time.RFC3339Nano, sb)
			if errA == nil && errB == nil {
				return ta.Equal(tb)
			}
		}
	}
	return reflect.DeepEqual(va, vb)
}

func decodeNumbers(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// bodyRecorder keeps the answer of a handler run for its body alone.
type bodyRecorder struct {
	header http.Header
	body   bytes.Buffer
}

func (b *bodyRecorder) Header() http.Header         { return b.header }
func (b *bodyRecorder) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bodyRecorder) WriteHeader(int)             {}
