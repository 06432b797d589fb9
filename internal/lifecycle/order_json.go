package lifecycle

import (
	"strconv"

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
	return httpapi.AppendPage(b, page, orderView.appendJSON)
}

// appendJSON appends v as encoding/json would encode it (the same members
// in the same order).
func (v orderView) appendJSON(b []byte) []byte {
	o := &v.Order
	b = httpapi.AppendMember(b, '{', "id")
	b = httpapi.AppendString(b, o.ID)
	b = httpapi.AppendMember(b, ',', "project")
	b = httpapi.AppendString(b, o.Project)
	b = httpapi.AppendMember(b, ',', "catalog_item_id")
	b = httpapi.AppendString(b, o.CatalogItemID)
	b = httpapi.AppendMember(b, ',', "service_type")
	b = httpapi.AppendString(b, o.ServiceType)
	b = httpapi.AppendMember(b, ',', "display_name")
	b = httpapi.AppendString(b, o.DisplayName)
	b = httpapi.AppendMember(b, ',', "labels")
	b = httpapi.AppendRawOr(b, o.labelsJSON, o.Labels)
	b = httpapi.AppendMember(b, ',', "user_values")
	b = httpapi.AppendRawOr(b, o.userValuesJSON, o.UserValues)
	b = httpapi.AppendMember(b, ',', "parent_id")
	b = httpapi.AppendStringPtr(b, o.ParentID)
	b = httpapi.AppendMember(b, ',', "state")
	b = httpapi.AppendString(b, o.State)
	b = httpapi.AppendMember(b, ',', "lifecycle")
	b = httpapi.AppendString(b, o.Lifecycle)
	b = httpapi.AppendMember(b, ',', "version")
	b = strconv.AppendInt(b, o.Version, 10)
	b = httpapi.AppendMember(b, ',', "generation")
	b = strconv.AppendInt(b, o.Generation, 10)
	b = httpapi.AppendMember(b, ',', "instance_id")
	b = httpapi.AppendString(b, o.InstanceID)
	b = httpapi.AppendMember(b, ',', "provider_name")
	b = httpapi.AppendString(b, o.ProviderName)
	b = httpapi.AppendMember(b, ',', "status")
	b = httpapi.AppendString(b, string(o.Status))
	b = httpapi.AppendMember(b, ',', "status_message")
	b = httpapi.AppendString(b, o.StatusMessage)
	if o.RestartCount != nil {
		b = httpapi.AppendMember(b, ',', "restart_count")
		b = strconv.AppendInt(b, *o.RestartCount, 10)
	}
	b = httpapi.AppendMember(b, ',', "last_error")
	b = httpapi.AppendString(b, o.LastError)
	b = httpapi.AppendMember(b, ',', "create_time")
	b = httpapi.AppendTime(b, o.CreateTime)
	b = httpapi.AppendMember(b, ',', "update_time")
	b = httpapi.AppendTime(b, o.UpdateTime)
	b = httpapi.AppendMember(b, ',', "deleted_at")
	b = httpapi.AppendTimePtr(b, o.DeletedAt)
	b = httpapi.AppendMember(b, ',', "delete_time")
	b = httpapi.AppendTimePtr(b, v.DeleteTime)
	b = httpapi.AppendMember(b, ',', "expire_time")
	b = httpapi.AppendTimePtr(b, o.ExpireTime)
	b = httpapi.AppendMember(b, ',', "attributes")
	b = httpapi.AppendRawOr(b, v.Attributes, nil)
	b = httpapi.AppendMember(b, ',', "path")
	b = httpapi.AppendString(b, v.Path)
	b = httpapi.AppendMember(b, ',', "conditions")
	if v.Conditions == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range v.Conditions {
			if i > 0 {
				b = append(b, ',')
			}
			b = httpapi.AppendMember(b, '{', "type")
			b = httpapi.AppendString(b, c.Type)
			b = httpapi.AppendMember(b, ',', "status")
			b = httpapi.AppendString(b, c.Status)
			b = httpapi.AppendMember(b, ',', "reason")
			b = httpapi.AppendString(b, c.Reason)
			b = httpapi.AppendMember(b, ',', "message")
			b = httpapi.AppendString(b, c.Message)
			b = httpapi.AppendMember(b, ',', "last_transition_time")
			b = httpapi.AppendTime(b, c.LastTransitionTime)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = httpapi.AppendMember(b, ',', "outputs")
	b = httpapi.AppendRawOr(b, v.Outputs, nil)
	b = httpapi.AppendMember(b, ',', "etag")
	b = httpapi.AppendString(b, v.ETag)
	if v.Cleanup != nil {
		b = httpapi.AppendMember(b, ',', "cleanup")
		b = append(b, '[')
		for i, c := range *v.Cleanup {
			if i > 0 {
				b = append(b, ',')
			}
			b = httpapi.AppendMember(b, '{', "task_id")
			b = httpapi.AppendString(b, c.TaskID)
			b = httpapi.AppendMember(b, ',', "instance_id")
			b = httpapi.AppendString(b, c.InstanceID)
			b = httpapi.AppendMember(b, ',', "provider_name")
			b = httpapi.AppendString(b, c.ProviderName)
			b = httpapi.AppendMember(b, ',', "status")
			b = httpapi.AppendString(b, c.Status)
			b = httpapi.AppendMember(b, ',', "request_time")
			b = httpapi.AppendTime(b, c.RequestTime)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
