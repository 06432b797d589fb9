-- name: TokenInsert :exec
INSERT INTO api_tokens (id, name, secret_sha256, role, project, provider, adapter, operation, service_types, projects, created_by, create_time, expire_time)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: TokenGet :one
SELECT id, name, secret_sha256, role, project, provider, adapter, operation, service_types, projects, created_by, create_time, expire_time, revoke_time
FROM api_tokens WHERE id = ?;

-- name: TokenList :many
SELECT id, name, secret_sha256, role, project, provider, adapter, operation, service_types, projects, created_by, create_time, expire_time, revoke_time
FROM api_tokens
WHERE (? = '' OR project = ?) AND id > ?
ORDER BY id
LIMIT CAST(? AS INTEGER);

-- name: TokenRevoke :exec
UPDATE api_tokens SET revoke_time = ? WHERE id = ? AND revoke_time IS NULL;

-- name: TokenAnyAdmin :one
-- params: now
SELECT COUNT(*) FROM api_tokens
WHERE role = 'admin' AND revoke_time IS NULL AND (expire_time IS NULL OR expire_time > ?);

-- name: TokenRevokeByOperation :exec
-- params: now, operation
UPDATE api_tokens SET revoke_time = ?
WHERE operation = ? AND operation <> '' AND revoke_time IS NULL;
