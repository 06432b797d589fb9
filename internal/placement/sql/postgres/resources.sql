-- name: ResourceInsert :exec
INSERT INTO resources (instance_id, catalog_item_instance_id, project, service_type, labels, original_request,
                       validated_request, provider_name, policy_status, status, create_time, update_time)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'PENDING', $10, $11);

-- name: ResourceGet :one
SELECT instance_id, catalog_item_instance_id, project, service_type, labels, original_request, validated_request,
       provider_name, policy_status, status, status_message, create_time, update_time, deleted_at,
       rehydrated_from, rehydration_status, last_rehydration
FROM resources
WHERE instance_id = $1 AND ($2::text = '' OR project = $3);

-- name: ResourceList :many
SELECT instance_id, catalog_item_instance_id, project, service_type, labels, original_request, validated_request,
       provider_name, policy_status, status, status_message, create_time, update_time, deleted_at,
       rehydrated_from, rehydration_status, last_rehydration
FROM resources
WHERE project = $1
  AND ($2::text = '' OR catalog_item_instance_id = $3)
  AND ($4::text = '' OR provider_name = $5)
  AND ($6::boolean OR deleted_at IS NULL)
  AND (create_time, instance_id) > ($7, $8)
ORDER BY create_time, instance_id
LIMIT $9;

-- name: ResourceSetStatus :exec
-- A status of DELETED also marks the resource deleted.
UPDATE resources
SET status = $1, status_message = $2, update_time = $3,
    deleted_at = CASE WHEN $4::text = 'DELETED' THEN COALESCE(deleted_at, $5) ELSE deleted_at END
WHERE instance_id = $6;

-- name: ResourceMarkDeleting :exec
UPDATE resources
SET deleted_at = COALESCE(deleted_at, $1), update_time = $2
WHERE instance_id = $3;

-- name: ResourceInsertRehydration :exec
INSERT INTO resources (instance_id, catalog_item_instance_id, project, service_type, labels, original_request,
                       validated_request, provider_name, policy_status, status, create_time, update_time,
                       rehydrated_from, rehydration_status, rehydration_operation)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'PENDING', $10, $11, $12, 'RUNNING', $13);

-- name: ResourceRehydrationRunning :one
SELECT instance_id FROM resources WHERE catalog_item_instance_id = $1 AND rehydration_status = 'RUNNING';

-- name: ResourceRehydrationEnd :exec
UPDATE resources SET rehydration_status = $1, update_time = $2
WHERE instance_id = $3 AND rehydration_status = 'RUNNING';

-- name: ResourceNoteRehydration :exec
UPDATE resources SET last_rehydration = $1, update_time = $2
WHERE instance_id = $3;

-- name: ResourceOrderID :one
SELECT catalog_item_instance_id FROM resources WHERE instance_id = $1;

-- name: ResourceSetRequest :exec
-- An update realised in place: the resource now stands for a new intent.
UPDATE resources
SET original_request = $1, validated_request = $2, policy_status = $3, update_time = $4
WHERE instance_id = $5 AND deleted_at IS NULL;

-- name: ResourceRehydrationsStalled :many
-- Rehydrations running for a while: their job may have been given up.
SELECT instance_id, rehydrated_from, rehydration_operation FROM resources
WHERE rehydration_status = 'RUNNING' AND update_time < $1
ORDER BY update_time
LIMIT 100;

-- name: ResourcesPendingStalled :many
-- Resources waiting for their first create for a while (not rehydrations,
-- which the query above covers): their job may have been given up.
SELECT instance_id FROM resources
WHERE status = 'PENDING' AND deleted_at IS NULL AND rehydration_status IS NULL AND update_time < $1
ORDER BY update_time
LIMIT 100;
