-- name: ProviderInsert :exec
INSERT INTO providers (id, name, endpoint, service_types, metadata, capacity, operations, status,
                       consecutive_failures, health_message, next_check_time, version, create_time, update_time, call_token, projects)
VALUES (?, ?, ?, ?, ?, ?, ?, 'unknown', 0, '', ?, 1, ?, ?, ?, ?);

-- name: ProviderGet :one
-- params: id_or_name, id_or_name, id_or_name
-- By id or by name: a provider's id defaults to its name.
SELECT id, name, endpoint, service_types, metadata, capacity, operations, status, consecutive_failures,
       health_message, last_check_time, next_check_time, version, create_time, update_time, previous_endpoint,
       endpoint_change_time, call_token, projects
FROM providers
WHERE id = ? OR name = ?
ORDER BY (id = ?) DESC
LIMIT 1;

-- name: ProviderGetByName :one
SELECT id, name, endpoint, service_types, metadata, capacity, operations, status, consecutive_failures,
       health_message, last_check_time, next_check_time, version, create_time, update_time, previous_endpoint,
       endpoint_change_time, call_token, projects
FROM providers
WHERE name = ?;

-- name: ProviderList :many
-- params: service_type, service_type, status, status, after_time, after_id, limit
SELECT id, name, endpoint, service_types, metadata, capacity, operations, status, consecutive_failures,
       health_message, last_check_time, next_check_time, version, create_time, update_time, previous_endpoint,
       endpoint_change_time, call_token, projects
FROM providers
WHERE (? = '' OR EXISTS (SELECT 1 FROM json_each(providers.service_types) WHERE json_each.value = ?))
  AND (? = '' OR status = ?)
  AND (create_time, id) > (?, ?)
ORDER BY create_time, id
LIMIT CAST(? AS INTEGER);

-- name: ProviderListDue :many
SELECT id, name, endpoint, service_types, metadata, capacity, operations, status, consecutive_failures,
       health_message, last_check_time, next_check_time, version, create_time, update_time, previous_endpoint,
       endpoint_change_time, call_token, projects
FROM providers
WHERE next_check_time <= ?
ORDER BY next_check_time, id
LIMIT CAST(? AS INTEGER);

-- name: ProviderUpdateRegistration :exec
-- params: endpoint, endpoint, endpoint_change_time, endpoint, endpoint, service_types, metadata, capacity, operations, call_token, projects, next_check_time, update_time, id, version
-- A move to another endpoint keeps the old one, and when it moved, on
-- the provider (issue 22: replicas registering one name); the new one has
-- not answered a health check yet: its status is unknown until it has.
UPDATE providers
SET previous_endpoint = CASE WHEN endpoint <> ? THEN endpoint ELSE previous_endpoint END,
    endpoint_change_time = CASE WHEN endpoint <> ? THEN ? ELSE endpoint_change_time END,
    status = CASE WHEN endpoint <> ? THEN 'unknown' ELSE status END,
    endpoint = ?, service_types = ?, metadata = ?, capacity = ?, operations = ?, call_token = ?,
    projects = ?, next_check_time = ?, version = version + 1, update_time = ?
WHERE id = ? AND version = ?;

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
SET status = ?, consecutive_failures = ?, health_message = ?, last_check_time = ?, next_check_time = ?, update_time = ?
WHERE id = ? AND version = ? AND status = ? AND consecutive_failures = ?;

-- name: ProviderDelete :exec
DELETE FROM providers WHERE id = ? AND version = ?;

-- name: ProviderLockByName :one
-- Reads a provider inside a write transaction; SQLite's immediate
-- transactions already hold the write lock.
SELECT id, name, endpoint, service_types, metadata, capacity, operations, status, consecutive_failures,
       health_message, last_check_time, next_check_time, version, create_time, update_time, previous_endpoint,
       endpoint_change_time, call_token, projects
FROM providers
WHERE name = ?;

-- name: ProviderKeyShareByName :one
-- Reads a create's provider inside a write transaction; SQLite's immediate
-- transactions already hold the write lock.
SELECT id, name, endpoint, service_types, metadata, capacity, operations, status, consecutive_failures,
       health_message, last_check_time, next_check_time, version, create_time, update_time, previous_endpoint,
       endpoint_change_time, call_token, projects
FROM providers
WHERE name = ?;
