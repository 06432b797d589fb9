-- name: CleanupTaskInsert :exec
-- One task per instance: a second deferred delete of it is harmless.
-- params: id, instance_id, provider_name, service_type, requested_at, create_time, update_time, instance_id
-- The task names its instance's order (order_id), which the order's owner
-- reads it by.
INSERT INTO cleanup_tasks (id, instance_id, provider_name, service_type, requested_at, retry_count, status,
                           last_error, create_time, update_time, order_id)
VALUES ($1, $2, $3, $4, $5, 0, 'PENDING', '', $6, $7,
        COALESCE((SELECT i.order_id FROM service_type_instances i WHERE i.id = $8), ''))
ON CONFLICT (instance_id) DO NOTHING;

-- name: CleanupTaskGet :one
SELECT id, instance_id, order_id, provider_name, service_type, requested_at, retry_count, status, last_attempt, last_error,
       create_time, update_time
FROM cleanup_tasks
WHERE id = $1;

-- name: CleanupTaskGetByInstance :one
SELECT id, instance_id, order_id, provider_name, service_type, requested_at, retry_count, status, last_attempt, last_error,
       create_time, update_time
FROM cleanup_tasks
WHERE instance_id = $1;

-- name: CleanupTaskListByOrder :many
-- params: order_id, limit
-- What is still being removed of an order, oldest first (its owner's view).
SELECT id, instance_id, order_id, provider_name, service_type, requested_at, retry_count, status, last_attempt,
       last_error, create_time, update_time
FROM cleanup_tasks
WHERE order_id = $1 AND order_id <> ''
ORDER BY create_time, id
LIMIT $2;

-- name: CleanupTaskList :many
-- params: status, status, provider_name, provider_name, after_time, after_id, limit
SELECT id, instance_id, order_id, provider_name, service_type, requested_at, retry_count, status, last_attempt, last_error,
       create_time, update_time
FROM cleanup_tasks
WHERE ($1::text = '' OR status = $2)
  AND ($3::text = '' OR provider_name = $4)
  AND (create_time, id) > ($5, $6)
ORDER BY create_time, id
LIMIT $7;

-- name: CleanupTaskClaim :many
-- params: claimed_until, update_time, claimed_by, now, limit
-- Takes a batch of pending tasks (or ones whose claim expired: the worker
-- died) so that no two workers run one task at once.
UPDATE cleanup_tasks
SET status = 'IN_PROGRESS', claimed_until = $1, update_time = $2, claimed_by = $3
WHERE id IN (
    SELECT id FROM cleanup_tasks
    WHERE status = 'PENDING' OR (status = 'IN_PROGRESS' AND claimed_until < $4)
    ORDER BY requested_at, id
    LIMIT $5
    FOR UPDATE SKIP LOCKED)
RETURNING id, instance_id, order_id, provider_name, service_type, requested_at, retry_count, status, last_attempt,
          last_error, create_time, update_time;

-- name: CleanupTaskRelease :exec
-- Gives a claimed task back untried (its provider is unknown or unavailable).
UPDATE cleanup_tasks SET status = 'PENDING', claimed_until = NULL, update_time = $1
WHERE id = $2 AND status = 'IN_PROGRESS';

-- name: CleanupTaskRecordFailure :exec
UPDATE cleanup_tasks
SET retry_count = $1, status = $2, last_attempt = $3, last_error = $4, claimed_until = NULL, update_time = $5
WHERE id = $6;

-- name: CleanupTaskDelete :exec
DELETE FROM cleanup_tasks WHERE id = $1;

-- name: CleanupTaskRetry :exec
UPDATE cleanup_tasks SET status = 'PENDING', retry_count = 0, update_time = $1
WHERE id = $2 AND status = 'FAILED';

-- name: CleanupTaskReleaseOfDead :exec
-- params: dead_process_ids
-- The tasks a dead process's worker had claimed go back to PENDING at once.
UPDATE cleanup_tasks SET status = 'PENDING', claimed_until = NULL, claimed_by = ''
WHERE status = 'IN_PROGRESS' AND claimed_by = ANY($1::text[]);
