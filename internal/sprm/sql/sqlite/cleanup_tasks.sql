-- name: CleanupTaskInsert :exec
-- One task per instance: a second deferred delete of it is harmless.
-- params: id, instance_id, provider_name, service_type, requested_at, create_time, update_time, instance_id
-- The task names its instance's order (order_id), which the order's owner
-- reads it by.
INSERT INTO cleanup_tasks (id, instance_id, provider_name, service_type, requested_at, retry_count, status,
                           last_error, create_time, update_time, order_id)
VALUES (?, ?, ?, ?, ?, 0, 'PENDING', '', ?, ?,
        COALESCE((SELECT i.order_id FROM service_type_instances i WHERE i.id = ?), ''))
ON CONFLICT (instance_id) DO NOTHING;

-- name: CleanupTaskGet :one
SELECT id, instance_id, order_id, provider_name, service_type, requested_at, retry_count, status, last_attempt, last_error,
       create_time, update_time
FROM cleanup_tasks
WHERE id = ?;

-- name: CleanupTaskGetByInstance :one
SELECT id, instance_id, order_id, provider_name, service_type, requested_at, retry_count, status, last_attempt, last_error,
       create_time, update_time
FROM cleanup_tasks
WHERE instance_id = ?;

-- name: CleanupTaskListByOrder :many
-- params: order_id, limit
-- What is still being removed of an order, oldest first (its owner's view).
SELECT id, instance_id, order_id, provider_name, service_type, requested_at, retry_count, status, last_attempt,
       last_error, create_time, update_time
FROM cleanup_tasks
WHERE order_id = ? AND order_id <> ''
ORDER BY create_time, id
LIMIT CAST(? AS INTEGER);

-- name: CleanupTaskList :many
-- params: status, status, provider_name, provider_name, after_time, after_id, limit
SELECT id, instance_id, order_id, provider_name, service_type, requested_at, retry_count, status, last_attempt, last_error,
       create_time, update_time
FROM cleanup_tasks
WHERE (? = '' OR status = ?)
  AND (? = '' OR provider_name = ?)
  AND (create_time, id) > (?, ?)
ORDER BY create_time, id
LIMIT CAST(? AS INTEGER);

-- name: CleanupTaskClaim :many
-- params: claimed_until, update_time, claimed_by, now, limit
-- Takes a batch of pending tasks (or ones whose claim expired: the worker
-- died) so that no two workers run one task at once.
UPDATE cleanup_tasks
SET status = 'IN_PROGRESS', claimed_until = ?, update_time = ?, claimed_by = ?
WHERE id IN (
    SELECT id FROM cleanup_tasks
    WHERE status = 'PENDING' OR (status = 'IN_PROGRESS' AND claimed_until < ?)
    ORDER BY requested_at, id
    LIMIT CAST(? AS INTEGER))
RETURNING id, instance_id, order_id, provider_name, service_type, requested_at, retry_count, status, last_attempt,
          last_error, create_time, update_time;

-- name: CleanupTaskRelease :exec
-- Gives a claimed task back untried (its provider is unknown or unavailable).
UPDATE cleanup_tasks SET status = 'PENDING', claimed_until = NULL, update_time = ?
WHERE id = ? AND status = 'IN_PROGRESS';

-- name: CleanupTaskRecordFailure :exec
UPDATE cleanup_tasks
SET retry_count = ?, status = ?, last_attempt = ?, last_error = ?, claimed_until = NULL, update_time = ?
WHERE id = ?;

-- name: CleanupTaskDelete :exec
DELETE FROM cleanup_tasks WHERE id = ?;

-- name: CleanupTaskRetry :exec
UPDATE cleanup_tasks SET status = 'PENDING', retry_count = 0, update_time = ?
WHERE id = ? AND status = 'FAILED';

-- name: CleanupTaskReleaseOfDead :exec
-- params: dead_process_ids
-- The tasks a dead process's worker had claimed go back to PENDING at once.
UPDATE cleanup_tasks SET status = 'PENDING', claimed_until = NULL, claimed_by = ''
WHERE status = 'IN_PROGRESS' AND claimed_by IN (SELECT value FROM json_each(?));
