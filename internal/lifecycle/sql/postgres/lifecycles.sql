-- name: LifecycleInsert :exec
INSERT INTO lifecycles (id, initial_state, states, transfers, compact, version, create_time, update_time)
VALUES ($1, $2, $3, $4, $5, 1, $6, $7);

-- name: LifecycleGet :one
SELECT id, initial_state, states, transfers, compact, version, create_time, update_time
FROM lifecycles
WHERE id = $1;

-- name: LifecycleList :many
-- Lifecycles page by id alone (the built-ins, merged in Go, have no real
-- create time); the primary key is the index.
SELECT id, initial_state, states, transfers, compact, version, create_time, update_time
FROM lifecycles
WHERE id > $1
ORDER BY id
LIMIT $2;

-- name: LifecycleUpdate :exec
UPDATE lifecycles
SET initial_state = $1, states = $2, transfers = $3, compact = $4, version = version + 1, update_time = $5
WHERE id = $6 AND version = $7;

-- name: LifecycleDelete :exec
DELETE FROM lifecycles WHERE id = $1 AND version = $2;
