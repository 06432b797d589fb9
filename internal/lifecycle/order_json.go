package lifecycle

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/store"
)

// The order views are encoded by hand: a page of 100 orders spent a fifth
// of its time in encoding/json, reflecting over every field and validating
// again each stored JSON document (labels, values, attribute sets) it
// passed through. The stored documents are trusted: only this program
// writes them, through json.Marshal (SQLite), or the database checked them
// (PostgreSQL jsonb). TestOrderJSON_MatchesEncodingJSON keeps this in step
// with the struct tags, which the rest of the program (and any other
// encoder) still follows.

// appendOrderPage appends a page of order views as API.md's list shape.
func appendOrderPage(b []byte, page store.Page[orderView]) []byte {
	b = append(b, `{"results":[`...)
	for i, v := range page.Results {
		if i > 0 {
			b = append(b, ',')
		}
		b = v.appendJSON(b)
	}
	b = append(b, `],"next_page_token":`...)
	b = httpapi.AppendString(b, page.NextPageToken)
	return append(b, '}')
}

// appendJSON appends v as encoding/json would encode it (the same members
// in the same order).
func (v orderView) appendJSON(b []byte) []byte {
	o := &v.Order
	b = appendMember(b, '{', "id")
	b = httpapi.AppendString(b, o.ID)
	b = appendMember(b, ',', "project")
	b = httpapi.AppendString(b, o.Project)
	b = appendMember(b, ',', "catalog_item_id")
	b = httpapi.AppendString(b, o.CatalogItemID)
	b = appendMember(b, ',', "service_type")
	b = httpapi.AppendString(b, o.ServiceType)
	b = appendMember(b, ',', "display_name")
	b = httpapi.AppendString(b, o.DisplayName)
	b = appendMember(b, ',', "labels")
	b = appendRawOr(b, o.labelsJSON, o.Labels)
	b = appendMember(b, ',', "user_values")
	b = appendRawOr(b, o.userValuesJSON, o.UserValues)
	b = appendMember(b, ',', "parent_id")
	b = appendStringPtr(b, o.ParentID)
	b = appendMember(b, ',', "state")
	b = httpapi.AppendString(b, o.State)
	b = appendMember(b, ',', "lifecycle")
	b = httpapi.AppendString(b, o.Lifecycle)
	b = appendMember(b, ',', "version")
	b = strconv.AppendInt(b, o.Version, 10)
	b = appendMember(b, ',', "generation")
	b = strconv.AppendInt(b, o.Generation, 10)
	b = appendMember(b, ',', "instance_id")
	b = httpapi.AppendString(b, o.InstanceID)
	b = appendMember(b, ',', "provider_name")
	b = httpapi.AppendString(b, o.ProviderName)
	b = appendMember(b, ',', "status")
	b = httpapi.AppendString(b, string(o.Status))
	b = appendMember(b, ',', "status_message")
	b = httpapi.AppendString(b, o.StatusMessage)
	if o.RestartCount != nil {
		b = appendMember(b, ',', "restart_count")
		b = strconv.AppendInt(b, *o.RestartCount, 10)
	}
	b = appendMember(b, ',', "last_error")
	b = httpapi.AppendString(b, o.LastError)
	b = appendMember(b, ',', "create_time")
	b = appendTime(b, o.CreateTime)
	b = appendMember(b, ',', "update_time")
	b = appendTime(b, o.UpdateTime)
	b = appendMember(b, ',', "deleted_at")
	b = appendTimePtr(b, o.DeletedAt)
	b = appendMember(b, ',', "delete_time")
	b = appendTimePtr(b, v.DeleteTime)
	b = appendMember(b, ',', "expire_time")
	b = appendTimePtr(b, o.ExpireTime)
	b = appendMember(b, ',', "attributes")
	b = appendRawOr(b, v.Attributes, nil)
	b = appendMember(b, ',', "path")
	b = httpapi.AppendString(b, v.Path)
	b = appendMember(b, ',', "conditions")
	if v.Conditions == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range v.Conditions {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendMember(b, '{', "type")
			b = httpapi.AppendString(b, c.Type)
			b = appendMember(b, ',', "status")
			b = httpapi.AppendString(b, c.Status)
			b = appendMember(b, ',', "reason")
			b = httpapi.AppendString(b, c.Reason)
			b = appendMember(b, ',', "message")
			b = httpapi.AppendString(b, c.Message)
			b = appendMember(b, ',', "last_transition_time")
			b = appendTime(b, c.LastTransitionTime)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendMember(b, ',', "outputs")
	b = appendRawOr(b, v.Outputs, nil)
	b = appendMember(b, ',', "etag")
	b = httpapi.AppendString(b, v.ETag)
	return append(b, '}')
}

// appendMember appends sep and a member name (a plain ASCII name) and its
// colon.
func appendMember(b []byte, sep byte, name string) []byte {
	b = append(b, sep, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// appendRawOr appends raw, a stored JSON document, or else v encoded (an
// order read whole rather than for a list), or null.
func appendRawOr(b []byte, raw json.RawMessage, v any) []byte {
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

func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return httpapi.AppendString(b, *s)
}

// appendTime appends t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds).
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func appendTimePtr(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return appendTime(b, *t)
}
