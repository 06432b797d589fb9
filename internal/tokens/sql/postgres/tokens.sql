-- name: TokenInsert :exec
INSERT INTO api_tokens (id, name, secret_sha256, role, project, provider, adapter, operation, service_types, projects, created_by, create_time, expire_time)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13);

-- name: TokenGet :one
SELECT id, name, secret_sha256, role, project, provider, adapter, operation, service_types, projects, created_by, create_time, expire_time, revoke_time
FROM api_tokens WHERE id = $1;

-- name: TokenList :many
SELECT id, name, secret_sha256, role, project, provider, adapter, operation, service_types, projects, created_by, create_time, expire_time, revoke_time
FROM api_tokens
WHERE ($1::text = '' OR project = $2) AND id > $3
ORDER BY id
LIMIT $4;

-- name: TokenRevoke :exec
UPDATE api_tokens SET revoke_time = $1 WHERE id = $2 AND revoke_time IS NULL;

-- name: TokenAnyAdmin :one
-- params: now
SELECT COUNT(*) FROM api_tokens
WHERE role = 'admin' AND revoke_time IS NULL AND (expire_time IS NULL OR expire_time > $1);

-- name: TokenRevokeByOperation :exec
-- params: now, operation
UPDATE api_tokens SET revoke_time = $1
WHERE operation = $2 AND operation <> '' AND revoke_time IS NULL;
