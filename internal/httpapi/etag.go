package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/stewardhq/steward/internal/invalid"
)

// ETag renders a resource version as a strong entity tag.
func ETag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }

// IfMatchVersion reads If-Match as the version a write expects. ok is false
// when the header is absent or "*" (no precondition). The store then checks
// the version in the same UPDATE (`WHERE id = ? AND version = ?`), so there
// is no window between comparing and writing; a miss is store.ErrStale (412).
func IfMatchVersion(r *http.Request) (version int64, ok bool, err error) {
	h := strings.TrimSpace(r.Header.Get("If-Match"))
	if h == "" || h == "*" {
		return 0, false, nil
	}
	tag := strings.Trim(strings.TrimPrefix(h, "W/"), `"`)
	v, err := strconv.ParseInt(tag, 10, 64)
	if err != nil || strings.Contains(h, ",") {
		// A tag we never issued cannot match the current one.
		return 0, false, ErrPreconditionFailed
	}
	if v < 0 {
		return 0, false, invalid.New("If-Match", "must be an etag this server issued")
	}
	return v, true, nil
}

// IfMatch is IfMatchVersion as an optional version: nil when the request
// sets no precondition.
func IfMatch(r *http.Request) (*int64, error) {
	v, ok, err := IfMatchVersion(r)
	if err != nil || !ok {
		return nil, err
	}
	return &v, nil
}
