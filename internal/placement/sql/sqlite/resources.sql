-- name: ResourceInsert :exec
INSERT INTO resources (instance_id, catalog_item_instance_id, project, service_type, labels, original_request,
                       validated_request, provider_name, policy_status, status, create_time, update_time)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', ?, ?);

-- name: ResourceGet :one
SELECT instance_id, catalog_item_instance_id, project, service_type, labels, original_request, validated_request,
       provider_name, policy_status, status, status_message, create_time, update_time, deleted_at,
       rehydrated_from, rehydration_status, last_rehydration
FROM resources
WHERE instance_id = ? AND (? = '' OR project = ?);

-- name: ResourceList :many
SELECT instance_id, catalog_item_instance_id, project, service_type, labels, original_request, validated_request,
       provider_name, policy_status, status, status_message, create_time, update_time, deleted_at,
       rehydrated_from, rehydration_status, last_rehydration
FROM resources
WHERE project = ?
  AND (? = '' OR catalog_item_instance_id = ?)
  AND (? = '' OR provider_name = ?)
  AND (? OR deleted_at IS NULL)
  AND (create_time, instance_id) > (?, ?)
ORDER BY create_time, instance_id
LIMIT CAST(? AS INTEGER);

-- name: ResourceSetStatus :exec
-- A status of DELETED also marks the resource deleted.
UPDATE resources
SET status = ?, status_message = ?, update_time = ?,
    deleted_at = CASE WHEN ? = 'DELETED' THEN COALESCE(deleted_at, ?) ELSE deleted_at END
WHERE instance_id = ?;

-- name: ResourceMarkDeleting :exec
UPDATE resources
SET deleted_at = COALESCE(deleted_at, ?), update_time = ?
WHERE instance_id = ?;

-- name: ResourceInsertRehydration :exec
INSERT INTO resources (instance_id, catalog_item_instance_id, project, service_type, labels, original_request,
                       validated_request, provider_name, policy_status, status, create_time, update_time,
                       rehydrated_from, rehydration_status, rehydration_operation)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', ?, ?, ?, 'RUNNING', ?);

-- name: ResourceRehydrationRunning :one
SELECT instance_id FROM resources WHERE catalog_item_instance_id = ? AND rehydration_status = 'RUNNING';

-- name: ResourceRehydrationEnd :exec
UPDATE resources SET rehydration_status = ?, update_time = ?
WHERE instance_id = ? AND rehydration_status = 'RUNNING';

-- name: ResourceNoteRehydration :exec
UPDATE resources SET last_rehydration = ?, update_time = ?
WHERE instance_id = ?;

-- name: ResourceOrderID :one
SELECT catalog_item_instance_id FROM resources WHERE instance_id = ?;

-- name: ResourceSetRequest :exec
-- An update realised in place: the resource now stands for a new intent.
UPDATE resources
SET original_request = ?, validated_request = ?, policy_status = ?, update_time = ?
WHERE instance_id = ? AND deleted_at IS NULL;

-- name: ResourceRehydrationsStalled :many
-- Rehydrations running for a while: their job may have been given up.
SELECT instance_id, rehydrated_from, rehydration_operation FROM resources
WHERE rehydration_status = 'RUNNING' AND update_time < ?
ORDER BY update_time
LIMIT 100;

-- name: ResourcesPendingStalled :many
-- Resources waiting for their first create for a while (not rehydrations,
-- which the query above covers): their job may have been given up.
SELECT instance_id FROM resources
WHERE status = 'PENDING' AND deleted_at IS NULL AND rehydration_status IS NULL AND update_time < ?
ORDER BY update_time
LIMIT 100;
