package sprm

import (
	"strconv"

	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/store"
)

// A list of instances is encoded by hand, as the order list is: a page of
// 100 spent half its time decoding each stored spec, outputs and sync
// result into maps and encoding them again through encoding/json's
// reflection. The stored documents are trusted: only this program writes
// them, through json.Marshal (SQLite), or the database checked them
// (PostgreSQL jsonb). TestInstanceJSON_MatchesEncodingJSON keeps this in
// step with the struct tags, which a whole read still goes through.

// appendInstancePage appends a page of instance views as API.md's list
// shape.
func appendInstancePage(b []byte, page store.Page[instanceView]) []byte {
	return httpapi.AppendPage(b, page, instanceView.appendJSON)
}

// appendJSON appends v as encoding/json would encode it (the same members
// in the same order).
func (v instanceView) appendJSON(b []byte) []byte {
	in := &v.Instance
	b = httpapi.AppendMember(b, '{', "id")
	b = httpapi.AppendString(b, in.ID)
	b = httpapi.AppendMember(b, ',', "name")
	b = httpapi.AppendString(b, in.Name)
	b = httpapi.AppendMember(b, ',', "provider_name")
	b = httpapi.AppendString(b, in.ProviderName)
	b = httpapi.AppendMember(b, ',', "service_type")
	b = httpapi.AppendString(b, in.ServiceType)
	b = httpapi.AppendMember(b, ',', "status")
	b = httpapi.AppendString(b, string(in.Status))
	b = httpapi.AppendMember(b, ',', "status_message")
	b = httpapi.AppendString(b, in.StatusMessage)
	if in.RestartCount != nil {
		b = httpapi.AppendMember(b, ',', "restart_count")
		b = strconv.AppendInt(b, *in.RestartCount, 10)
	}
	b = httpapi.AppendMember(b, ',', "spec")
	b = httpapi.AppendRawOr(b, in.specJSON, in.Spec)
	b = httpapi.AppendMember(b, ',', "outputs")
	b = httpapi.AppendRawOr(b, in.outputsJSON, in.Outputs)
	b = httpapi.AppendMember(b, ',', "synced")
	b = httpapi.AppendRawOr(b, in.syncedJSON, in.Synced)
	b = httpapi.AppendMember(b, ',', "deletion")
	if in.Deletion == nil {
		b = append(b, "null"...)
	} else {
		b = httpapi.AppendMember(b, '{', "status")
		b = httpapi.AppendString(b, in.Deletion.Status)
		b = httpapi.AppendMember(b, ',', "cleanup_task_id")
		b = httpapi.AppendString(b, in.Deletion.CleanupTaskID)
		b = append(b, '}')
	}
	b = httpapi.AppendMember(b, ',', "create_time")
	b = httpapi.AppendTime(b, in.CreateTime)
	b = httpapi.AppendMember(b, ',', "update_time")
	b = httpapi.AppendTime(b, in.UpdateTime)
	b = httpapi.AppendMember(b, ',', "delete_time")
	b = httpapi.AppendTimePtr(b, in.DeleteTime)
	b = httpapi.AppendMember(b, ',', "deleted_at")
	b = httpapi.AppendTimePtr(b, in.DeletedAt)
	b = httpapi.AppendMember(b, ',', "path")
	b = httpapi.AppendString(b, v.Path)
	b = httpapi.AppendMember(b, ',', "instance_id")
	b = httpapi.AppendString(b, v.InstanceID)
	b = httpapi.AppendMember(b, ',', "etag")
	b = httpapi.AppendString(b, v.ETag)
	return append(b, '}')
}
