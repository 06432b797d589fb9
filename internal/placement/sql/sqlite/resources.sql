-- name: ResourceInsert :exec
INSERT INTO resources (instance_id, catalog_item_instance_id, project, service_type, labels, original_request,
                       validated_request, provider_name, policy_status, status, create_time, update_time)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', ?, ?);

-- name: ResourceGet :one
-- A resource's status is its instance's (the SPRM holds it), unless
-- placement decided it (outcome); before the instance exists, its own.
SELECT r.instance_id, r.catalog_item_instance_id, r.project, r.service_type, r.labels, r.original_request,
       r.validated_request, r.provider_name, r.policy_status,
       COALESCE(NULLIF(r.outcome, ''), i.status, r.status) AS status,
       CASE WHEN r.outcome <> '' THEN r.outcome_message WHEN i.id IS NOT NULL THEN i.status_message
            ELSE r.status_message END AS status_message,
       r.create_time, r.update_time,
       COALESCE(r.deleted_at, CASE WHEN i.status = 'DELETED' THEN i.update_time END) AS deleted_at,
       r.rehydrated_from, r.rehydration_status, r.last_rehydration
FROM resources r LEFT JOIN service_type_instances i ON i.id = r.instance_id
WHERE r.instance_id = ? AND (? = '' OR r.project = ?);

-- name: ResourceList :many
-- params: project, catalog_item_instance_id, catalog_item_instance_id, provider_name, provider_name, show_deleted, after_time, after_id, limit
SELECT r.instance_id, r.catalog_item_instance_id, r.project, r.service_type, r.labels, r.original_request,
       r.validated_request, r.provider_name, r.policy_status,
       COALESCE(NULLIF(r.outcome, ''), i.status, r.status) AS status,
       CASE WHEN r.outcome <> '' THEN r.outcome_message WHEN i.id IS NOT NULL THEN i.status_message
            ELSE r.status_message END AS status_message,
       r.create_time, r.update_time,
       COALESCE(r.deleted_at, CASE WHEN i.status = 'DELETED' THEN i.update_time END) AS deleted_at,
       r.rehydrated_from, r.rehydration_status, r.last_rehydration
FROM resources r LEFT JOIN service_type_instances i ON i.id = r.instance_id
WHERE r.project = ?
  AND (? = '' OR r.catalog_item_instance_id = ?)
  AND (? = '' OR r.provider_name = ?)
  AND (? OR (r.deleted_at IS NULL AND (i.status IS NULL OR i.status <> 'DELETED')))
  AND (r.create_time, r.instance_id) > (?, ?)
ORDER BY r.create_time, r.instance_id
LIMIT CAST(? AS INTEGER);

-- name: ResourceSetOutcome :exec
-- params: outcome, outcome_message, update_time, outcome, update_time, instance_id
-- What placement decided about a resource: FAILED (its create given up) or
-- DELETED (nothing is left to delete; also marks it deleted).
UPDATE resources
SET outcome = ?, outcome_message = ?, update_time = ?,
    deleted_at = CASE WHEN ? = 'DELETED' THEN COALESCE(deleted_at, ?) ELSE deleted_at END
WHERE instance_id = ?;

-- name: ResourceSetCreated :one
-- The resource's create was answered: it no longer waits for one. Says
-- whether its deletion was asked for meanwhile.
-- params: status, update_time, instance_id
UPDATE resources SET status = CASE WHEN status = 'PENDING' THEN ? ELSE status END, update_time = ?
WHERE instance_id = ?
RETURNING deleted_at IS NOT NULL AS deleting;

-- name: ResourceMarkDeleting :exec
-- params: now, now, instance_id
UPDATE resources
SET deleted_at = COALESCE(deleted_at, ?), update_time = ?
WHERE instance_id = ?;

-- name: ResourceInsertRehydration :exec
INSERT INTO resources (instance_id, catalog_item_instance_id, project, service_type, labels, original_request,
                       validated_request, provider_name, policy_status, status, create_time, update_time,
                       rehydrated_from, rehydration_status, rehydration_operation)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', ?, ?, ?, 'RUNNING', ?);

-- name: ResourceRehydrationRunning :one
-- A rehydration of the order under way: running, or done and waiting for
-- the order's reconcile to move to it and retire the old resource.
SELECT n.instance_id FROM resources n
WHERE n.catalog_item_instance_id = ?
  AND (n.rehydration_status = 'RUNNING'
       OR (n.rehydration_status = 'DONE' AND n.deleted_at IS NULL
           AND EXISTS (SELECT 1 FROM resources o WHERE o.instance_id = n.rehydrated_from AND o.deleted_at IS NULL)))
LIMIT 1;

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
-- notnull: rehydrated_from
-- Rehydrations running for a while: their job may have been given up.
SELECT instance_id, rehydrated_from, rehydration_operation FROM resources
WHERE rehydration_status = 'RUNNING' AND update_time < ?
ORDER BY update_time
LIMIT 100;

-- name: ResourcesPendingStalled :many
-- Resources waiting for their first create for a while (not rehydrations,
-- which the query above covers): their job may have been given up. A
-- create's answer moves the resource's status off PENDING, so this reads
-- the partial index resources_pending, what still waits, not every
-- resource; one whose instance was answered by a process that died before
-- recording it comes back with that instance's status, for the sweep to
-- record (an instance's PENDING or UNKNOWN is not an answer).
SELECT r.instance_id, COALESCE(i.status, '') AS instance_status
FROM resources r LEFT JOIN service_type_instances i ON i.id = r.instance_id
WHERE r.status = 'PENDING' AND r.outcome = '' AND r.deleted_at IS NULL AND r.rehydration_status IS NULL
  AND r.update_time < ?
ORDER BY r.update_time
LIMIT 100;

-- name: ResourceCopyStart :one
-- When the copy of a rehydration's data began (NULL: not begun, or none).
SELECT copy_start_time FROM resources WHERE instance_id = ?;

-- name: ResourceSetCopyStart :exec
-- params: copy_start_time, update_time, instance_id
-- Records the first start of a rehydration's copy; a later attempt keeps it.
UPDATE resources SET copy_start_time = COALESCE(copy_start_time, ?), update_time = ?
WHERE instance_id = ?;
