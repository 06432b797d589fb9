-- name: InstanceInsert :exec
-- Records a create's intent; no row is inserted when the id exists.
INSERT INTO service_type_instances (id, project, name, provider_name, service_type, spec, status, version, create_time, update_time,
                                   order_id)
VALUES (?, ?, ?, ?, ?, ?, 'PENDING', 1, ?, ?, ?)
ON CONFLICT (id) DO NOTHING;

-- name: InstanceGet :one
SELECT i.id, i.project, i.name, i.provider_name, i.service_type, i.spec, i.status, i.status_message,
       i.status_observed_time, i.version, i.create_time, i.update_time, i.deleted_at, t.id AS cleanup_task_id, t.status AS cleanup_task_status,
       i.restart_count, i.delete_time, i.outputs, i.synced
FROM service_type_instances i LEFT JOIN cleanup_tasks t ON t.instance_id = i.id
WHERE i.id = ? AND (? = '' OR i.project = ?);

-- name: InstanceList :many
-- params: project, provider_name, provider_name, service_type, service_type, status, status, show_deleted, after_time, after_id, limit
SELECT i.id, i.project, i.name, i.provider_name, i.service_type, i.spec, i.status, i.status_message,
       i.status_observed_time, i.version, i.create_time, i.update_time, i.deleted_at, t.id AS cleanup_task_id, t.status AS cleanup_task_status,
       i.restart_count, i.delete_time, i.outputs, i.synced
FROM service_type_instances i LEFT JOIN cleanup_tasks t ON t.instance_id = i.id
WHERE i.project = ?
  AND (? = '' OR i.provider_name = ?)
  AND (? = '' OR i.service_type = ?)
  AND (? = '' OR i.status = ?)
  AND (? OR i.deleted_at IS NULL)
  AND (i.create_time, i.id) > (?, ?)
ORDER BY i.create_time, i.id
LIMIT CAST(? AS INTEGER);

-- name: InstanceRecordCreated :many
-- Records the provider's answer, unless a status report got there first.
-- An UNKNOWN outcome being resolved (no cleanup queued) is recorded too.
-- params: status, status_message, update_time, status_time, resync_time, outputs, id
UPDATE service_type_instances
SET status = ?, status_message = ?, version = version + 1, update_time = ?,
    status_time = ?, resync_time = ?, resync_attempts = 0, outputs = COALESCE(?, outputs)
WHERE id = ? AND (status = 'PENDING'
    OR (status = 'UNKNOWN' AND NOT EXISTS (SELECT 1 FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id)))
RETURNING order_id;

-- name: InstanceKeepAnsweredOutputs :exec
-- A create's answer came after a status report, which recorded the status
-- (InstanceRecordCreated then changes nothing): the answer's outputs are
-- kept all the same, unless a report brought outputs of its own (newer).
-- params: outputs, update_time, id
UPDATE service_type_instances
SET outputs = ?, version = version + 1, update_time = ?
WHERE id = ? AND outputs IS NULL AND status <> 'DELETED';

-- name: InstanceDeletionAsked :one
-- Whether the instance's deletion went ahead (it is being deleted, or is).
-- Its delete time says so even once a provider's report has changed its
-- status: a provider that answered the delete 404 while still making the
-- instance may report it RUNNING before its create's answer is recorded.
SELECT status IN ('DELETING', 'DELETED') OR delete_time IS NOT NULL OR deleted_at IS NOT NULL AS deleting
FROM service_type_instances WHERE id = ?;

-- name: InstanceDeleteIntent :exec
-- Removes an intent the provider refused (it holds nothing under that id).
DELETE FROM service_type_instances
WHERE id = ? AND (status = 'PENDING'
    OR (status = 'UNKNOWN' AND NOT EXISTS (SELECT 1 FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id)));

-- name: InstanceApplyStatus :many
-- Returns the instance as it now is (as InstanceGet reads it) and the
-- order it was created for: a report is answered with no read after it.
-- params: status, status_message, observed_time, update_time, restart_count, restart_count, status, deleted_at, status, delete_time, status_time, resync_time, outputs, synced, id, observed_time
UPDATE service_type_instances
SET status = ?, status_message = ?, status_observed_time = ?, version = version + 1, update_time = ?,
    restart_count = CASE WHEN ? IS NULL THEN restart_count ELSE ? END,
    deleted_at = CASE WHEN ? = 'DELETED' THEN COALESCE(deleted_at, ?) ELSE deleted_at END,
    delete_time = CASE WHEN ? IN ('DELETING', 'DELETED') THEN COALESCE(delete_time, ?) ELSE delete_time END,
    status_time = ?, resync_time = ?, resync_attempts = 0, outputs = COALESCE(?, outputs),
    synced = COALESCE(?, synced)
WHERE id = ? AND (status_observed_time IS NULL OR status_observed_time <= ?)
RETURNING id, project, name, provider_name, service_type, spec, status, status_message,
          status_observed_time, version, create_time, update_time, deleted_at,
          (SELECT t.id FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id) AS cleanup_task_id,
          (SELECT t.status FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id) AS cleanup_task_status,
          restart_count, delete_time, outputs, synced, order_id;

-- name: InstanceSetStatus :exec
-- A status Steward sets itself: resync_time is when to read the instance
-- back (NULL: not while its create's outcome is unknown).
UPDATE service_type_instances
SET status = ?, status_message = ?, version = version + 1, update_time = ?, resync_time = ?, resync_attempts = 0
WHERE id = ?;

-- name: InstanceMarkDeleted :many
-- params: deleted_at, delete_time, update_time, id
UPDATE service_type_instances
SET status = 'DELETED', deleted_at = COALESCE(deleted_at, ?), delete_time = COALESCE(delete_time, ?),
    version = version + 1, update_time = ?, resync_time = NULL
WHERE id = ?
RETURNING order_id;

-- name: InstanceMarkDeleting :many
-- params: delete_time, update_time, resync_time, id
-- A delete accepted: delete_time is when, and a later one does not move it.
-- An instance DELETED since the caller read it stays so (no row changes).
UPDATE service_type_instances
SET status = 'DELETING', status_message = '', delete_time = COALESCE(delete_time, ?), version = version + 1,
    update_time = ?, resync_time = ?, resync_attempts = 0
WHERE id = ? AND status <> 'DELETED'
RETURNING order_id;

-- name: InstanceDeleteRequested :exec
-- params: delete_time, id
-- A deletion queued for the cleanup worker: delete_time is when, unless
-- one was requested before.
UPDATE service_type_instances SET delete_time = COALESCE(delete_time, ?) WHERE id = ?;

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

-- name: InstanceRecordUpdate :many
-- params: spec, sent_time, status, sent_time, status_message, sent_time, sent_time, update_time, status_time, resync_time, outputs, id
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
    version = version + 1, update_time = ?, status_time = ?, resync_time = ?, resync_attempts = 0,
    outputs = COALESCE(?, outputs)
WHERE id = ? AND deleted_at IS NULL
RETURNING order_id;

-- name: InstanceLockVersion :one
-- An If-Match precondition, read inside a write transaction; SQLite's
-- immediate transactions already hold the write lock.
SELECT version FROM service_type_instances WHERE id = ?;

-- name: InstanceResyncClaim :many
-- params: resync_time, resync_claimed_by, now, limit
-- Takes a batch of instances due to be read back from their providers
-- (issue 22), moving each one's resync_time to the claim's end so that no
-- other process takes it meanwhile. An instance whose deletion is queued
-- is the cleanup worker's, not the resync's.
UPDATE service_type_instances
SET resync_time = ?, resync_claimed_by = ?
WHERE id IN (
    SELECT i.id FROM service_type_instances i
    WHERE i.resync_time <= ? AND i.deleted_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM cleanup_tasks t WHERE t.instance_id = i.id)
    ORDER BY i.resync_time
    LIMIT CAST(? AS INTEGER))
RETURNING id, provider_name, status, status_message, resync_attempts, outputs;

-- name: InstanceResyncUnchanged :exec
-- The provider answered what the row says: only status_time moves (no new
-- version, so no client's If-Match goes stale for nothing).
UPDATE service_type_instances SET status_time = ?
WHERE id = ? AND status = ? AND status_message = ?;

-- name: InstanceResyncDone :exec
-- params: settled_resync_time, unsettled_resync_time, resync_attempts, id, resync_claimed_by
-- Schedules the next read of a claimed instance by the status it has now:
-- settled at the first time (spread), unsettled at the second after that
-- many reads in a row, deleted never.
UPDATE service_type_instances
SET resync_time = CASE WHEN deleted_at IS NOT NULL THEN NULL
                       WHEN status IN ('RUNNING', 'COMPLETED', 'FAILED') THEN ? ELSE ? END,
    resync_attempts = CASE WHEN status IN ('RUNNING', 'COMPLETED', 'FAILED') THEN 0 ELSE ? END,
    resync_claimed_by = ''
WHERE id = ? AND resync_claimed_by = ?;

-- name: InstanceResyncReleaseOfDead :exec
-- params: resync_time, dead_process_ids
-- The instances a dead process had claimed are due again at once. The
-- <> '' term lets SQLite use the partial index of resync_claimed_by (it
-- scanned every instance without), and the unary + keeps it off the
-- resync_time index, which holds every live instance.
UPDATE service_type_instances SET resync_time = ?, resync_claimed_by = ''
WHERE resync_claimed_by IN (SELECT value FROM json_each(?)) AND resync_claimed_by <> ''
  AND +resync_time IS NOT NULL;


-- name: InstanceOutputs :many
-- params: ids
-- The outputs and sync of some instances (a page of orders shows its
-- instances'): the ones with neither are left out.
SELECT id, outputs, synced FROM service_type_instances
WHERE id IN (SELECT value FROM json_each(?)) AND (outputs IS NOT NULL OR synced IS NOT NULL);
