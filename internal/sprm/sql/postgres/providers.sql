-- name: ProviderInsert :exec
INSERT INTO providers (id, name, endpoint, service_types, metadata, capacity, operations, status,
                       consecutive_failures, health_message, next_check_time, version, create_time, update_time, call_token, projects)
VALUES ($1, $2, $3, $4, $5, $6, $7, 'unknown', 0, '', $8, 1, $9, $10, $11, $12);

-- name: ProviderGet :one
-- params: id_or_name, id_or_name, id_or_name
-- By id or by name: a provider's id defaults to its name.
SELECT id, name, endpoint, service_types, metadata, capacity, operations, status, consecutive_failures,
       health_message, last_check_time, next_check_time, version, create_time, update_time, previous_endpoint,
       endpoint_change_time, call_token, projects
FROM providers
WHERE id = $1 OR name = $2
ORDER BY (id = $3::text) DESC
LIMIT 1;

-- name: ProviderGetByName :one
SELECT id, name, endpoint, service_types, metadata, capacity, operations, status, consecutive_failures,
       health_message, last_check_time, next_check_time, version, create_time, update_time, previous_endpoint,
       endpoint_change_time, call_token, projects
FROM providers
WHERE name = $1;

-- name: ProviderList :many
-- params: service_type, service_type, status, status, after_time, after_id, limit
SELECT id, name, endpoint, service_types, metadata, capacity, operations, status, consecutive_failures,
       health_message, last_check_time, next_check_time, version, create_time, update_time, previous_endpoint,
       endpoint_change_time, call_token, projects
FROM providers
WHERE ($1::text = '' OR service_types @> jsonb_build_array($2::text))
  AND ($3::text = '' OR status = $4)
  AND (create_time, id) > ($5, $6)
ORDER BY create_time, id
LIMIT $7;

-- name: ProviderListDue :many
SELECT id, name, endpoint, service_types, metadata, capacity, operations, status, consecutive_failures,
       health_message, last_check_time, next_check_time, version, create_time, update_time, previous_endpoint,
       endpoint_change_time, call_token, projects
FROM providers
WHERE next_check_time <= $1
ORDER BY next_check_time, id
LIMIT $2;

-- name: ProviderUpdateRegistration :exec
-- params: endpoint, endpoint, endpoint_change_time, endpoint, endpoint, service_types, metadata, capacity, operations, call_token, projects, next_check_time, update_time, id, version
-- A move to another endpoint keeps the old one, and when it moved, on
-- the provider (issue 22: replicas registering one name); the new one has
-- not answered a health check yet: its status is unknown until it has.
UPDATE providers
SET previous_endpoint = CASE WHEN endpoint <> $1 THEN endpoint ELSE previous_endpoint END,
    endpoint_change_time = CASE WHEN endpoint <> $2 THEN $3::timestamptz ELSE endpoint_change_time END,
    status = CASE WHEN endpoint <> $4 THEN 'unknown' ELSE status END,
    endpoint = $5, service_types = $6, metadata = $7, capacity = $8, operations = $9, call_token = $10,
    projects = $11, next_check_time = $12, version = version + 1, update_time = $13
WHERE id = $14 AND version = $15;

-- name: ProviderUpdateHealth :exec
-- Health is the monitor's, not the registrant's: it does not bump version,
-- so a PATCH with If-Match never fails because a health check ran. The
-- check's own version is a condition instead: a check that started
-- before a re-registration or PATCH judged an endpoint that may no longer
-- be the provider's, and must not overwrite the at-once check that the
-- registration scheduled. And the health it judged from is one too: the
-- first check a registration runs itself may race the periodic pass, and
-- two checks of one state must record its change once (one audit record,
-- one failure counted), so the later of them is outdated.
-- params: status, consecutive_failures, health_message, last_check_time, next_check_time, update_time, id, version, from_status, from_consecutive_failures
UPDATE providers
SET status = $1, consecutive_failures = $2, health_message = $3, last_check_time = $4, next_check_time = $5, update_time = $6
WHERE id = $7 AND version = $8 AND status = $9 AND consecutive_failures = $10;

-- name: ProviderDelete :exec
DELETE FROM providers WHERE id = $1 AND version = $2;

-- name: ProviderLockByName :one
-- Locks the provider row for the transaction, so a create's intent and a
-- deregistration's check of live instances cannot interleave.
SELECT id, name, endpoint, service_types, metadata, capacity, operations, status, consecutive_failures,
       health_message, last_check_time, next_check_time, version, create_time, update_time, previous_endpoint,
       endpoint_change_time, call_token, projects
FROM providers
WHERE name = $1
FOR UPDATE;

-- name: ProviderKeyShareByName :one
-- A create's intent reads its provider under a key share lock: creates on
-- one provider run side by side, while a deregistration (which deletes the
-- row, so waits for them) and a registration's update (FOR UPDATE) still
-- cannot interleave with one. Health checks, which update no key, do not
-- wait for creates. (FOR UPDATE here serialised every create of a
-- provider: 9.5 ms of lock wait each at 16 clients.)
SELECT id, name, endpoint, service_types, metadata, capacity, operations, status, consecutive_failures,
       health_message, last_check_time, next_check_time, version, create_time, update_time, previous_endpoint,
       endpoint_change_time, call_token, projects
FROM providers
WHERE name = $1
FOR KEY SHARE;
