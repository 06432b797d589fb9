package httpapi

import (
	"encoding/json"
	"time"

	"github.com/stewardhq/steward/internal/store"
)

// The helpers of the hand-written encoders of list pages (orders, SP
// Resource Manager instances): each appends what encoding/json would.

// AppendMember appends sep and a member name (a plain ASCII name) and its
// colon.
func AppendMember(b []byte, sep byte, name string) []byte {
	b = append(b, sep, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// AppendRawOr appends raw, a stored JSON document, or else v encoded (a
// resource read whole rather than for a list), or null.
func AppendRawOr(b []byte, raw json.RawMessage, v any) []byte {
	if len(raw) > 0 {
		return append(b, raw...)
	}
	if v != nil {
		if enc, err := json.Marshal(v); err == nil {
			return append(b, enc...)
		}
	}
	return append(b, "null"...)
}

// AppendStringPtr appends *s as a JSON string, or null.
func AppendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return AppendString(b, *s)
}

// AppendTime appends t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds).
func AppendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// AppendTimePtr appends *t as AppendTime does, or null.
func AppendTimePtr(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return AppendTime(b, *t)
}

// AppendPage appends page as API.md's list shape, each result by
// appendItem, cut short of [store.MaxPageBytes] (see
// [store.AppendPageJSON]): its token then names the page that goes on from
// the last result it holds.
func AppendPage[T any](b []byte, page store.Page[T], appendItem func(T, []byte) []byte) []byte {
	return store.AppendPageJSON(b, page, store.MaxPageBytes, appendItem)
}
