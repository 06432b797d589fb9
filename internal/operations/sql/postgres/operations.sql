-- name: OperationInsert :exec
INSERT INTO operations (id, project, kind, target, done, metadata, create_time, update_time, request_key)
VALUES ($1, $2, $3, $4, FALSE, $5, $6, $7, $8);

-- name: OperationGetByRequestKey :one
-- request_key <> '': on the partial index (see OrderIDByRequestKey),
-- not through every operation of the project.
SELECT id, project, kind, target, done, metadata, response, error, create_time, update_time
FROM operations
WHERE project = $1 AND request_key = $2 AND request_key <> '';

-- name: OperationGet :one
SELECT id, project, kind, target, done, metadata, response, error, create_time, update_time
FROM operations
WHERE project = $1 AND id = $2;

-- name: OperationGetByID :one
SELECT id, project, kind, target, done, metadata, response, error, create_time, update_time
FROM operations
WHERE id = $1;

-- name: OperationList :many
-- params: project, kind, kind, target, target, done, done, after_time, after_id, limit
SELECT id, project, kind, target, done, metadata, response, error, create_time, update_time
FROM operations
WHERE project = $1
  AND ($2::text = '' OR kind = $3)
  AND ($4::text = '' OR target = $5)
  AND ($6::boolean IS NULL OR done = $7)
  AND (create_time, id) > ($8, $9)
ORDER BY create_time, id
LIMIT $10;

-- name: OperationUpdateMetadata :exec
UPDATE operations SET metadata = $1, update_time = $2
WHERE id = $3 AND done = FALSE;

-- name: OperationFinish :exec
UPDATE operations SET done = TRUE, response = $1, error = $2, metadata = $3, update_time = $4
WHERE id = $5 AND done = FALSE;
