-- name: InstanceInsert :exec
-- Records a create's intent; no row is inserted when the id exists.
INSERT INTO service_type_instances (id, project, name, provider_name, service_type, spec, status, version, create_time, update_time)
VALUES ($1, $2, $3, $4, $5, $6, 'PENDING', 1, $7, $8)
ON CONFLICT (id) DO NOTHING;

-- name: InstanceGet :one
SELECT i.id, i.project, i.name, i.provider_name, i.service_type, i.spec, i.status, i.status_message,
       i.status_observed_time, i.version, i.create_time, i.update_time, i.deleted_at, t.id, t.status,
       i.restart_count
FROM service_type_instances i LEFT JOIN cleanup_tasks t ON t.instance_id = i.id
WHERE i.id = $1 AND ($2::text = '' OR i.project = $3);

-- name: InstanceList :many
SELECT i.id, i.project, i.name, i.provider_name, i.service_type, i.spec, i.status, i.status_message,
       i.status_observed_time, i.version, i.create_time, i.update_time, i.deleted_at, t.id, t.status,
       i.restart_count
FROM service_type_instances i LEFT JOIN cleanup_tasks t ON t.instance_id = i.id
WHERE i.project = $1
  AND ($2::text = '' OR i.provider_name = $3)
  AND ($4::text = '' OR i.service_type = $5)
  AND ($6::text = '' OR i.status = $7)
  AND ($8::boolean OR i.deleted_at IS NULL)
  AND (i.create_time, i.id) > ($9, $10)
ORDER BY i.create_time, i.id
LIMIT $11;

-- name: InstanceRecordCreated :exec
-- Records the provider's answer, unless a status report got there first.
-- An UNKNOWN outcome being resolved (no cleanup queued) is recorded too.
UPDATE service_type_instances
SET status = $1, status_message = $2, version = version + 1, update_time = $3
WHERE id = $4 AND (status = 'PENDING'
    OR (status = 'UNKNOWN' AND NOT EXISTS (SELECT 1 FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id)));

-- name: InstanceDeleteIntent :exec
-- Removes an intent the provider refused (it holds nothing under that id).
DELETE FROM service_type_instances
WHERE id = $1 AND (status = 'PENDING'
    OR (status = 'UNKNOWN' AND NOT EXISTS (SELECT 1 FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id)));

-- name: InstanceApplyStatus :exec
UPDATE service_type_instances
SET status = $1, status_message = $2, status_observed_time = $3, version = version + 1, update_time = $4,
    restart_count = COALESCE($5::bigint, restart_count),
    deleted_at = CASE WHEN $6::text = 'DELETED' THEN COALESCE(deleted_at, $7) ELSE deleted_at END
WHERE id = $8 AND (status_observed_time IS NULL OR status_observed_time <= $9);

-- name: InstanceSetStatus :exec
UPDATE service_type_instances
SET status = $1, status_message = $2, version = version + 1, update_time = $3
WHERE id = $4;

-- name: InstanceMarkDeleted :exec
UPDATE service_type_instances
SET status = 'DELETED', deleted_at = COALESCE(deleted_at, $1), version = version + 1, update_time = $2
WHERE id = $3;

-- name: InstanceListStalePending :many
-- Intents whose request died with its process: nobody will record their outcome.
SELECT i.id, i.provider_name, i.service_type
FROM service_type_instances i
WHERE i.status = 'PENDING' AND i.create_time < $1
  AND NOT EXISTS (SELECT 1 FROM cleanup_tasks t WHERE t.instance_id = i.id)
ORDER BY i.create_time
LIMIT $2;

-- name: InstanceCountLiveByProvider :one
SELECT count(*) FROM service_type_instances WHERE provider_name = $1 AND deleted_at IS NULL;

-- name: InstanceCountLivePerProvider :many
-- Kept by the triggers of migration 00010.
SELECT provider_name, live FROM provider_live_instances;

-- name: InstanceRecordUpdate :exec
-- An in-place update the provider accepted: the new spec and the status it
-- answered, unless a report observed after the update was sent got there
-- first. Reports observed before it was sent are of the old spec and are
-- ignored from now on.
UPDATE service_type_instances
SET spec = $1,
    status = CASE WHEN status_observed_time IS NULL OR status_observed_time <= $2 THEN $3 ELSE status END,
    status_message = CASE WHEN status_observed_time IS NULL OR status_observed_time <= $4 THEN $5 ELSE status_message END,
    status_observed_time = CASE WHEN status_observed_time IS NULL OR status_observed_time <= $6 THEN $7
                                ELSE status_observed_time END,
    version = version + 1, update_time = $8
WHERE id = $9 AND deleted_at IS NULL;

-- name: InstanceLockVersion :one
-- An If-Match precondition: locks the row for the transaction, so no other
-- writer moves its version between the compare and the transaction's writes.
SELECT version FROM service_type_instances WHERE id = $1 FOR UPDATE;
