-- name: PeerRegister :exec
INSERT INTO steward_processes (id, host, pid, started_at, heartbeat_at, expires_at)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at;

-- name: PeerRenew :exec
UPDATE steward_processes SET heartbeat_at = ?, expires_at = ? WHERE id = ?;

-- name: PeerListOthers :many
SELECT id, host, pid, expires_at FROM steward_processes WHERE id <> ? ORDER BY id;

-- name: PeerDelete :exec
-- params: ids
DELETE FROM steward_processes WHERE id IN (SELECT value FROM json_each(?));
