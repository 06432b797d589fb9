-- name: SessionInsert :exec
INSERT INTO console_sessions (id_sha256, token_id, token_sha256, create_time, idle_expire_time, expire_time)
VALUES (?, ?, ?, ?, ?, ?);

-- name: SessionGet :one
SELECT token_id, token_sha256, create_time, idle_expire_time, expire_time
FROM console_sessions WHERE id_sha256 = ?;

-- name: SessionTouch :exec
-- The idle expiry slides with use (written at most once a minute per session).
UPDATE console_sessions SET idle_expire_time = ? WHERE id_sha256 = ?;

-- name: SessionDelete :exec
DELETE FROM console_sessions WHERE id_sha256 = ?;

-- name: SessionSweep :exec
-- params: now
-- Sessions past their idle expiry, which never passes the absolute one.
DELETE FROM console_sessions WHERE idle_expire_time <= ?;
