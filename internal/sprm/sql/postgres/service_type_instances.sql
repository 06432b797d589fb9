-- name: InstanceInsert :exec
-- Records a create's intent; no row is inserted when the id exists.
INSERT INTO service_type_instances (id, project, name, provider_name, service_type, spec, status, version, create_time, update_time,
                                   order_id)
VALUES ($1, $2, $3, $4, $5, $6, 'PENDING', 1, $7, $8, $9)
ON CONFLICT (id) DO NOTHING;

-- name: InstanceGet :one
SELECT i.id, i.project, i.name, i.provider_name, i.service_type, i.spec, i.status, i.status_message,
       i.status_observed_time, i.version, i.create_time, i.update_time, i.deleted_at, t.id AS cleanup_task_id, t.status AS cleanup_task_status,
       i.restart_count, i.delete_time, i.outputs, i.synced
FROM service_type_instances i LEFT JOIN cleanup_tasks t ON t.instance_id = i.id
WHERE i.id = $1 AND ($2::text = '' OR i.project = $3);

-- name: InstanceList :many
-- params: project, provider_name, provider_name, service_type, service_type, status, status, show_deleted, after_time, after_id, limit
-- plan: per call (store.PlanPerCall): its filters are ($n = '' OR col = $m)
SELECT i.id, i.project, i.name, i.provider_name, i.service_type, i.spec, i.status, i.status_message,
       i.status_observed_time, i.version, i.create_time, i.update_time, i.deleted_at, t.id AS cleanup_task_id, t.status AS cleanup_task_status,
       i.restart_count, i.delete_time, i.outputs, i.synced
FROM service_type_instances i LEFT JOIN cleanup_tasks t ON t.instance_id = i.id
WHERE i.project = $1
  AND ($2::text = '' OR i.provider_name = $3)
  AND ($4::text = '' OR i.service_type = $5)
  AND ($6::text = '' OR i.status = $7)
  AND ($8::boolean OR i.deleted_at IS NULL)
  AND (i.create_time, i.id) > ($9, $10)
ORDER BY i.create_time, i.id
LIMIT $11;

-- name: InstanceRecordCreated :many
-- Records the provider's answer, unless a status report got there first.
-- An UNKNOWN outcome being resolved (no cleanup queued) is recorded too.
-- params: status, status_message, update_time, status_time, resync_time, outputs, id
UPDATE service_type_instances
SET status = $1, status_message = $2, version = version + 1, update_time = $3,
    status_time = $4, resync_time = $5, resync_attempts = 0, outputs = COALESCE($6::jsonb, outputs)
WHERE id = $7 AND (status = 'PENDING'
    OR (status = 'UNKNOWN' AND NOT EXISTS (SELECT 1 FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id)))
RETURNING order_id;

-- name: InstanceKeepAnsweredOutputs :exec
-- A create's answer came after a status report, which recorded the status
-- (InstanceRecordCreated then changes nothing): the answer's outputs are
-- kept all the same, unless a report brought outputs of its own (newer).
-- params: outputs, update_time, id
UPDATE service_type_instances
SET outputs = $1::jsonb, version = version + 1, update_time = $2
WHERE id = $3 AND outputs IS NULL AND status <> 'DELETED';

-- name: InstanceDeletionAsked :one
-- Whether the instance's deletion went ahead (it is being deleted, or is).
-- Its delete time says so even once a provider's report has changed its
-- status: a provider that answered the delete 404 while still making the
-- instance may report it RUNNING before its create's answer is recorded.
SELECT status IN ('DELETING', 'DELETED') OR delete_time IS NOT NULL OR deleted_at IS NOT NULL AS deleting
FROM service_type_instances WHERE id = $1;

-- name: InstanceDeleteIntent :exec
-- Removes an intent the provider refused (it holds nothing under that id).
DELETE FROM service_type_instances
WHERE id = $1 AND (status = 'PENDING'
    OR (status = 'UNKNOWN' AND NOT EXISTS (SELECT 1 FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id)));

-- name: InstanceApplyStatus :many
-- Returns the instance as it now is (as InstanceGet reads it) and the
-- order it was created for: a report is answered with no read after it.
-- params: status, status_message, observed_time, update_time, restart_count, restart_count, status, deleted_at, status, delete_time, status_time, resync_time, outputs, synced, id, observed_time
-- outputs NULL keeps the instance's: a report need not repeat them.
UPDATE service_type_instances
SET status = $1, status_message = $2, status_observed_time = $3, version = version + 1, update_time = $4,
    restart_count = CASE WHEN $5::bigint IS NULL THEN restart_count ELSE $6 END,
    deleted_at = CASE WHEN $7::text = 'DELETED' THEN COALESCE(deleted_at, $8) ELSE deleted_at END,
    delete_time = CASE WHEN $9::text IN ('DELETING', 'DELETED') THEN COALESCE(delete_time, $10) ELSE delete_time END,
    status_time = $11, resync_time = $12, resync_attempts = 0, outputs = COALESCE($13::jsonb, outputs),
    synced = COALESCE($14::jsonb, synced)
WHERE id = $15 AND (status_observed_time IS NULL OR status_observed_time <= $16)
RETURNING id, project, name, provider_name, service_type, spec, status, status_message,
          status_observed_time, version, create_time, update_time, deleted_at,
          (SELECT t.id FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id) AS cleanup_task_id,
          (SELECT t.status FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id) AS cleanup_task_status,
          restart_count, delete_time, outputs, synced, order_id;

-- name: InstanceSetStatus :exec
-- A status Steward sets itself: resync_time is when to read the instance
-- back (NULL: not while its create's outcome is unknown).
UPDATE service_type_instances
SET status = $1, status_message = $2, version = version + 1, update_time = $3, resync_time = $4, resync_attempts = 0
WHERE id = $5;

-- name: InstanceMarkDeleted :many
-- params: deleted_at, delete_time, update_time, id
UPDATE service_type_instances
SET status = 'DELETED', deleted_at = COALESCE(deleted_at, $1), delete_time = COALESCE(delete_time, $2),
    version = version + 1, update_time = $3, resync_time = NULL
WHERE id = $4
RETURNING order_id;

-- name: InstanceMarkDeleting :many
-- params: delete_time, update_time, resync_time, id
-- A delete accepted: delete_time is when, and a later one does not move it.
-- An instance DELETED since the caller read it stays so (no row changes).
UPDATE service_type_instances
SET status = 'DELETING', status_message = '', delete_time = COALESCE(delete_time, $1), version = version + 1,
    update_time = $2, resync_time = $3, resync_attempts = 0
WHERE id = $4 AND status <> 'DELETED'
RETURNING order_id;

-- name: InstanceDeleteRequested :exec
-- params: delete_time, id
-- A deletion queued for the cleanup worker: delete_time is when, unless
-- one was requested before.
UPDATE service_type_instances SET delete_time = COALESCE(delete_time, $1) WHERE id = $2;

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
-- Kept by the triggers of migrations 00010 and 00038, in shards.
SELECT provider_name, COALESCE(sum(live), 0)::bigint AS live FROM provider_live_instances GROUP BY provider_name;

-- name: InstanceRecordUpdate :many
-- params: spec, sent_time, status, sent_time, status_message, sent_time, sent_time, update_time, status_time, resync_time, outputs, id
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
    version = version + 1, update_time = $8, status_time = $9, resync_time = $10, resync_attempts = 0,
    outputs = COALESCE($11::jsonb, outputs)
WHERE id = $12 AND deleted_at IS NULL
RETURNING order_id;

-- name: InstanceLockVersion :one
-- An If-Match precondition: locks the row for the transaction, so no other
-- writer moves its version between the compare and the transaction's writes.
SELECT version FROM service_type_instances WHERE id = $1 FOR UPDATE;

-- name: InstanceResyncClaim :many
-- params: resync_time, resync_claimed_by, now, limit
-- Takes a batch of instances due to be read back from their providers
-- (issue 22), moving each one's resync_time to the claim's end so that no
-- other process takes it meanwhile; SKIP LOCKED makes concurrent claims
-- take different rows. An instance whose deletion is queued is the cleanup
-- worker's, not the resync's.
UPDATE service_type_instances
SET resync_time = $1, resync_claimed_by = $2
WHERE id IN (
    SELECT i.id FROM service_type_instances i
    WHERE i.resync_time <= $3 AND i.deleted_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM cleanup_tasks t WHERE t.instance_id = i.id)
    ORDER BY i.resync_time
    LIMIT $4
    FOR UPDATE SKIP LOCKED)
RETURNING id, provider_name, status, status_message, resync_attempts, outputs;

-- name: InstanceResyncUnchanged :exec
-- The provider answered what the row says: only status_time moves (no new
-- version, so no client's If-Match goes stale for nothing).
UPDATE service_type_instances SET status_time = $1
WHERE id = $2 AND status = $3 AND status_message = $4;

-- name: InstanceResyncDone :exec
-- params: settled_resync_time, unsettled_resync_time, resync_attempts, id, resync_claimed_by
-- Schedules the next read of a claimed instance by the status it has now:
-- settled at $1 (spread), unsettled at $2 after $3 reads in a row, deleted never.
UPDATE service_type_instances
SET resync_time = CASE WHEN deleted_at IS NOT NULL THEN NULL
                       WHEN status IN ('RUNNING', 'COMPLETED', 'FAILED') THEN $1::timestamptz ELSE $2::timestamptz END,
    resync_attempts = CASE WHEN status IN ('RUNNING', 'COMPLETED', 'FAILED') THEN 0 ELSE $3::integer END,
    resync_claimed_by = ''
WHERE id = $4 AND resync_claimed_by = $5;

-- name: InstanceResyncReleaseOfDead :exec
-- params: resync_time, dead_process_ids
-- The instances a dead process had claimed are due again at once. The
-- <> '' term lets the generic plan, which a cached statement runs by, use
-- the partial index of resync_claimed_by: it cannot prove the array's
-- elements are not '' (it walked the resync_time index, every live
-- instance, without).
UPDATE service_type_instances SET resync_time = $1, resync_claimed_by = ''
WHERE resync_claimed_by = ANY($2::text[]) AND resync_claimed_by <> '' AND resync_time IS NOT NULL;


-- name: InstanceOutputs :many
-- params: ids
-- The outputs and sync of some instances (a page of orders shows its
-- instances'): the ones with neither are left out.
SELECT id, outputs, synced FROM service_type_instances
WHERE id = ANY($1::text[]) AND (outputs IS NOT NULL OR synced IS NOT NULL);
