-- name: InstanceInsert :exec
-- Records a create's intent; no row is inserted when the id exists.
INSERT INTO service_type_instances (id, project, name, provider_name, service_type, spec, status, version, create_time, update_time)
VALUES (?, ?, ?, ?, ?, ?, 'PENDING', 1, ?, ?)
ON CONFLICT (id) DO NOTHING;

-- name: InstanceGet :one
SELECT i.id, i.project, i.name, i.provider_name, i.service_type, i.spec, i.status, i.status_message,
       i.status_observed_time, i.version, i.create_time, i.update_time, i.deleted_at, t.id, t.status,
       i.restart_count
FROM service_type_instances i LEFT JOIN cleanup_tasks t ON t.instance_id = i.id
WHERE i.id = ? AND (? = '' OR i.project = ?);

-- name: InstanceList :many
SELECT i.id, i.project, i.name, i.provider_name, i.service_type, i.spec, i.status, i.status_message,
       i.status_observed_time, i.version, i.create_time, i.update_time, i.deleted_at, t.id, t.status,
       i.restart_count
FROM service_type_instances i LEFT JOIN cleanup_tasks t ON t.instance_id = i.id
WHERE i.project = ?
  AND (? = '' OR i.provider_name = ?)
  AND (? = '' OR i.service_type = ?)
  AND (? = '' OR i.status = ?)
  AND (? OR i.deleted_at IS NULL)
  AND (i.create_time, i.id) > (?, ?)
ORDER BY i.create_time, i.id
LIMIT CAST(? AS INTEGER);

-- name: InstanceRecordCreated :exec
-- Records the provider's answer, unless a status report got there first.
-- An UNKNOWN outcome being resolved (no cleanup queued) is recorded too.
UPDATE service_type_instances
SET status = ?, status_message = ?, version = version + 1, update_time = ?
WHERE id = ? AND (status = 'PENDING'
    OR (status = 'UNKNOWN' AND NOT EXISTS (SELECT 1 FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id)));

-- name: InstanceDeleteIntent :exec
-- Removes an intent the provider refused (it holds nothing under that id).
DELETE FROM service_type_instances
WHERE id = ? AND (status = 'PENDING'
    OR (status = 'UNKNOWN' AND NOT EXISTS (SELECT 1 FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id)));

-- name: InstanceApplyStatus :exec
UPDATE service_type_instances
SET status = ?, status_message = ?, status_observed_time = ?, version = version + 1, update_time = ?,
    restart_count = COALESCE(?, restart_count),
    deleted_at = CASE WHEN ? = 'DELETED' THEN COALESCE(deleted_at, ?) ELSE deleted_at END
WHERE id = ? AND (status_observed_time IS NULL OR status_observed_time <= ?);

-- name: InstanceSetStatus :exec
UPDATE service_type_instances
SET status = ?, status_message = ?, version = version + 1, update_time = ?
WHERE id = ?;

-- name: InstanceMarkDeleted :exec
UPDATE service_type_instances
SET status = 'DELETED', deleted_at = COALESCE(deleted_at, ?), version = version + 1, update_time = ?
WHERE id = ?;

-- name: InstanceListStalePending :many
-- Intents whose request died with its process: nobody will record their outcome.
SELECT i.id, i.provider_name, i.service_type
FROM service_type_instances i
WHERE i.status = 'PENDING' AND i.create_time < ?
  AND NOT EXISTS (SELECT 1 FROM cleanup_tasks t WHERE t.instance_id = i.id)
ORDER BY i.create_time
LIMIT CAST(? AS INTEGER);

-- name: InstanceCountLiveByProvider :one
SELECT count(*) FROM service_type_instances WHERE provider_name = ? AND deleted_at IS NULL;

-- name: InstanceCountLivePerProvider :many
-- Kept by the triggers of migration 00010.
SELECT provider_name, live FROM provider_live_instances;

-- name: InstanceRecordUpdate :exec
-- An in-place update the provider accepted: the new spec and the status it
-- answered, unless a report observed after the update was sent got there
-- first. Reports observed before it was sent are of the old spec and are
-- ignored from now on.
UPDATE service_type_instances
SET spec = ?,
    status = CASE WHEN status_observed_time IS NULL OR status_observed_time <= ? THEN ? ELSE status END,
    status_message = CASE WHEN status_observed_time IS NULL OR status_observed_time <= ? THEN ? ELSE status_message END,
    status_observed_time = CASE WHEN status_observed_time IS NULL OR status_observed_time <= ? THEN ?
                                ELSE status_observed_time END,
    version = version + 1, update_time = ?
WHERE id = ? AND deleted_at IS NULL;

-- name: InstanceLockVersion :one
-- An If-Match precondition, read inside a write transaction; SQLite's
-- immediate transactions already hold the write lock.
SELECT version FROM service_type_instances WHERE id = ?;
