-- name: RepairInsert :exec
INSERT INTO repair_operations (id, project, app_instance_id, instance_id, provider_name, service_type, action, scope,
    target_member_id, component_key, status, steps, error, next_safe_action, idempotency_key, request_key,
    requested_by, deliver_time, version, create_time, update_time, finish_time)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULL, '', $13, $14, $15, NULL, 1, $16, $17, NULL);

-- name: RepairGet :one
SELECT id, project, app_instance_id, instance_id, provider_name, service_type, action, scope, target_member_id,
    component_key, status, steps, error, next_safe_action, idempotency_key, requested_by, deliver_time, version,
    create_time, update_time, finish_time
FROM repair_operations WHERE id = $1;

-- name: RepairByRequestKey :one
SELECT id, project, app_instance_id, instance_id, provider_name, service_type, action, scope, target_member_id,
    component_key, status, steps, error, next_safe_action, idempotency_key, requested_by, deliver_time, version,
    create_time, update_time, finish_time
FROM repair_operations WHERE request_key = $1 AND request_key <> '';

-- name: RepairRunning :one
SELECT id FROM repair_operations WHERE app_instance_id = $1 AND status IN ('pending', 'running');

-- name: RepairList :many
SELECT id, project, app_instance_id, instance_id, provider_name, service_type, action, scope, target_member_id,
    component_key, status, steps, error, next_safe_action, idempotency_key, requested_by, deliver_time, version,
    create_time, update_time, finish_time
FROM repair_operations
WHERE project = $1 AND app_instance_id = $2 AND ($3::text = '' OR status = $4) AND id > $5
ORDER BY id
LIMIT $6;

-- name: RepairUpdate :exec
UPDATE repair_operations
SET status = $1, steps = $2, error = $3, next_safe_action = $4, deliver_time = $5, version = version + 1, update_time = $6, finish_time = $7
WHERE id = $8 AND version = $9;

-- name: RepairStale :many
-- params: silent_since
SELECT id FROM repair_operations
WHERE status IN ('pending', 'running') AND update_time < $1
ORDER BY update_time
LIMIT 100;

-- name: RuntimeGet :one
SELECT state, observed_time FROM app_runtimes WHERE app_instance_id = $1;

-- name: RuntimeUpsert :exec
-- A report older than the one kept changes nothing.
INSERT INTO app_runtimes (app_instance_id, project, state, observed_time, update_time)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (app_instance_id) DO UPDATE
SET state = excluded.state, observed_time = excluded.observed_time, update_time = excluded.update_time
WHERE app_runtimes.observed_time <= excluded.observed_time;
