-- name: OperationInsert :exec
INSERT INTO operations (id, project, kind, target, done, metadata, create_time, update_time, request_key)
VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?);

-- name: OperationGetByRequestKey :one
-- request_key <> '': on the partial index (see OrderIDByRequestKey),
-- not through every operation of the project.
SELECT id, project, kind, target, done, metadata, response, error, create_time, update_time
FROM operations
WHERE project = ? AND request_key = ? AND request_key <> '';

-- name: OperationGet :one
SELECT id, project, kind, target, done, metadata, response, error, create_time, update_time
FROM operations
WHERE project = ? AND id = ?;

-- name: OperationGetByID :one
SELECT id, project, kind, target, done, metadata, response, error, create_time, update_time
FROM operations
WHERE id = ?;

-- name: OperationList :many
-- params: project, kind, kind, target, target, done, done, after_time, after_id, limit
SELECT id, project, kind, target, done, metadata, response, error, create_time, update_time
FROM operations
WHERE project = ?
  AND (? = '' OR kind = ?)
  AND (? = '' OR target = ?)
  AND (? IS NULL OR done = ?)
  AND (create_time, id) > (?, ?)
ORDER BY create_time, id
LIMIT CAST(? AS INTEGER);

-- name: OperationUpdateMetadata :exec
UPDATE operations SET metadata = ?, update_time = ?
WHERE id = ? AND done = 0;

-- name: OperationFinish :exec
UPDATE operations SET done = 1, response = ?, error = ?, metadata = ?, update_time = ?
WHERE id = ? AND done = 0;
