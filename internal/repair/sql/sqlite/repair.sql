-- name: RepairInsert :exec
INSERT INTO repair_operations (id, project, app_instance_id, instance_id, provider_name, service_type, action, scope,
    target_member_id, component_key, status, steps, error, next_safe_action, idempotency_key, request_key,
    requested_by, deliver_time, version, create_time, update_time, finish_time)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, '', ?, ?, ?, NULL, 1, ?, ?, NULL);

-- name: RepairGet :one
SELECT id, project, app_instance_id, instance_id, provider_name, service_type, action, scope, target_member_id,
    component_key, status, steps, error, next_safe_action, idempotency_key, requested_by, deliver_time, version,
    create_time, update_time, finish_time
FROM repair_operations WHERE id = ?;

-- name: RepairByRequestKey :one
SELECT id, project, app_instance_id, instance_id, provider_name, service_type, action, scope, target_member_id,
    component_key, status, steps, error, next_safe_action, idempotency_key, requested_by, deliver_time, version,
    create_time, update_time, finish_time
FROM repair_operations WHERE request_key = ? AND request_key <> '';

-- name: RepairRunning :one
SELECT id FROM repair_operations WHERE app_instance_id = ? AND status IN ('pending', 'running');

-- name: RepairList :many
SELECT id, project, app_instance_id, instance_id, provider_name, service_type, action, scope, target_member_id,
    component_key, status, steps, error, next_safe_action, idempotency_key, requested_by, deliver_time, version,
    create_time, update_time, finish_time
FROM repair_operations
WHERE project = ? AND app_instance_id = ? AND (? = '' OR status = ?) AND id > ?
ORDER BY id
LIMIT CAST(? AS INTEGER);

-- name: RepairUpdate :exec
UPDATE repair_operations
SET status = ?, steps = ?, error = ?, next_safe_action = ?, deliver_time = ?, version = version + 1, update_time = ?, finish_time = ?
WHERE id = ? AND version = ?;

-- name: RepairStale :many
-- params: silent_since
SELECT id FROM repair_operations
WHERE status IN ('pending', 'running') AND update_time < ?
ORDER BY update_time
LIMIT 100;

-- name: RuntimeGet :one
SELECT state, observed_time FROM app_runtimes WHERE app_instance_id = ?;

-- name: RuntimeUpsert :exec
-- A report older than the one kept changes nothing.
INSERT INTO app_runtimes (app_instance_id, project, state, observed_time, update_time)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (app_instance_id) DO UPDATE
SET state = excluded.state, observed_time = excluded.observed_time, update_time = excluded.update_time
WHERE app_runtimes.observed_time <= excluded.observed_time;
