-- name: IdempotencyKeyInsert :exec
INSERT INTO idempotency_keys (principal, key, method, path, request_hash, created_at, locked_until, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (principal, key) DO NOTHING;

-- name: IdempotencyKeyTakeOver :exec
-- Claims a key whose record expired, or whose first request was abandoned
-- (in flight past its lock, same request): the process serving it died.
UPDATE idempotency_keys
SET method = $1, path = $2, request_hash = $3, status_code = NULL, response_header = NULL, response_body = NULL,
    created_at = $4, locked_until = $5, expires_at = $6
WHERE principal = $7 AND key = $8
  AND (expires_at < $9 OR (status_code IS NULL AND locked_until < $10 AND request_hash = $11));

-- name: IdempotencyKeyGet :one
SELECT request_hash, status_code, response_header, response_body
FROM idempotency_keys
WHERE principal = $1 AND key = $2;

-- name: IdempotencyKeyComplete :exec
UPDATE idempotency_keys
SET status_code = $1, response_header = $2, response_body = $3
WHERE principal = $4 AND key = $5 AND status_code IS NULL;

-- name: IdempotencyKeyRelease :exec
DELETE FROM idempotency_keys
WHERE principal = $1 AND key = $2 AND status_code IS NULL;

-- name: IdempotencyKeyPrune :exec
DELETE FROM idempotency_keys
WHERE expires_at < $1 AND (status_code IS NOT NULL OR locked_until < $2);
