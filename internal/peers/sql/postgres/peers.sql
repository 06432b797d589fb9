-- name: PeerRegister :exec
INSERT INTO steward_processes (id, host, pid, started_at, heartbeat_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at;

-- name: PeerRenew :exec
UPDATE steward_processes SET heartbeat_at = $1, expires_at = $2 WHERE id = $3;

-- name: PeerListOthers :many
SELECT id, host, pid, expires_at FROM steward_processes WHERE id <> $1 ORDER BY id;

-- name: PeerDelete :exec
-- params: ids
DELETE FROM steward_processes WHERE id = ANY($1::text[]);
