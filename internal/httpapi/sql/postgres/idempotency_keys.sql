-- name: IdempotencyKeyInsert :exec
INSERT INTO idempotency_keys (principal, key, method, path, request_hash, created_at, locked_until, expires_at, holder)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (principal, key) DO NOTHING;

-- name: IdempotencyKeyTakeOver :exec
-- params: method, path, request_hash, now, locked_until, expires_at, holder, principal, key, now, now, request_hash
-- Claims a key whose record expired, or whose first request was abandoned
-- (in flight past its lock, same request): the process serving it died.
UPDATE idempotency_keys
SET method = $1, path = $2, request_hash = $3, status_code = NULL, response_header = NULL, response_body = NULL,
    created_at = $4, locked_until = $5, expires_at = $6, holder = $7
WHERE principal = $8 AND key = $9
  AND (expires_at < $10 OR (status_code IS NULL AND locked_until < $11 AND request_hash = $12));

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
-- params: now, now
DELETE FROM idempotency_keys
WHERE expires_at < $1 AND (status_code IS NOT NULL OR locked_until < $2);

-- name: IdempotencyKeyReleaseOfDead :exec
-- params: holders
-- The keys whose first request a dead process was serving: a retry runs it
-- again at once.
DELETE FROM idempotency_keys
WHERE status_code IS NULL AND holder = ANY($1::text[]);
