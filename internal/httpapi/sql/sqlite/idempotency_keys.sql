-- name: IdempotencyKeyInsert :exec
INSERT INTO idempotency_keys (principal, key, method, path, request_hash, created_at, locked_until, expires_at, holder)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (principal, key) DO NOTHING;

-- name: IdempotencyKeyTakeOver :exec
-- params: method, path, request_hash, now, locked_until, expires_at, holder, principal, key, now, now, request_hash
-- Claims a key whose record expired, or whose first request was abandoned
-- (in flight past its lock, same request): the process serving it died.
UPDATE idempotency_keys
SET method = ?, path = ?, request_hash = ?, status_code = NULL, response_header = NULL, response_body = NULL,
    created_at = ?, locked_until = ?, expires_at = ?, holder = ?
WHERE principal = ? AND key = ?
  AND (expires_at < ? OR (status_code IS NULL AND locked_until < ? AND request_hash = ?));

-- name: IdempotencyKeyGet :one
SELECT request_hash, status_code, response_header, response_body
FROM idempotency_keys
WHERE principal = ? AND key = ?;

-- name: IdempotencyKeyComplete :exec
UPDATE idempotency_keys
SET status_code = ?, response_header = ?, response_body = ?
WHERE principal = ? AND key = ? AND status_code IS NULL;

-- name: IdempotencyKeyRelease :exec
DELETE FROM idempotency_keys
WHERE principal = ? AND key = ? AND status_code IS NULL;

-- name: IdempotencyKeyPrune :exec
-- params: now, now
DELETE FROM idempotency_keys
WHERE expires_at < ? AND (status_code IS NOT NULL OR locked_until < ?);

-- name: IdempotencyKeyReleaseOfDead :exec
-- params: holders
-- The keys whose first request a dead process was serving: a retry runs it
-- again at once.
DELETE FROM idempotency_keys
WHERE status_code IS NULL AND holder IN (SELECT value FROM json_each(?));
