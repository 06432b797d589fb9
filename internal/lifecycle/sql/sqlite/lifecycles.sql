-- name: LifecycleInsert :exec
INSERT INTO lifecycles (id, initial_state, states, transfers, compact, version, create_time, update_time)
VALUES (?, ?, ?, ?, ?, 1, ?, ?);

-- name: LifecycleGet :one
SELECT id, initial_state, states, transfers, compact, version, create_time, update_time
FROM lifecycles
WHERE id = ?;

-- name: LifecycleList :many
-- Lifecycles page by id alone (the built-ins, merged in Go, have no real
-- create time); the primary key is the index.
SELECT id, initial_state, states, transfers, compact, version, create_time, update_time
FROM lifecycles
WHERE id > ?
ORDER BY id
LIMIT CAST(? AS INTEGER);

-- name: LifecycleUpdate :exec
UPDATE lifecycles
SET initial_state = ?, states = ?, transfers = ?, compact = ?, version = version + 1, update_time = ?
WHERE id = ? AND version = ?;

-- name: LifecycleDelete :exec
DELETE FROM lifecycles WHERE id = ? AND version = ?;
