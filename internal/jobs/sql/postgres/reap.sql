-- River's public API cannot do these (docs/jobs.md); its tests in
-- jobs_test.go fail if River's tables change under them.

-- name: JobRequeueOfDead :exec
-- params: dead_clients
-- The jobs a dead process was running (the last client that fetched them is
-- the dead one) run again now; River's attempt count is kept, so a worker
-- still sees its last attempt as the last.
UPDATE river_job
SET state = 'available', scheduled_at = now()
WHERE state = 'running'
  AND attempted_by[array_length(attempted_by, 1)] = ANY($1::text[]);

-- name: JobLeaderOfDeadResign :exec
-- params: dead_clients
-- Notified as River's own resignation is (riverpgxv5's LeaderResign), so
-- the live clients bid at once instead of at their next election interval
-- (5-6s): the notification is sent when the reap commits.
WITH resigned AS (
    DELETE FROM river_leader WHERE leader_id = ANY($1::text[]) RETURNING leader_id
)
SELECT pg_notify(current_schema() || '.river_leadership',
                 json_build_object('leader_id', leader_id, 'action', 'resigned')::text)
FROM resigned;

-- name: JobInsertPlain :exec
-- params: args, kind, max_attempts, priority, queue
-- Unused on PostgreSQL (River's insert is a cached prepared statement there
-- and notifies the queue); kept for the parity of the two files.
INSERT INTO river_job (args, created_at, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags)
VALUES ($1, now(), $2, $3, '{}', $4, $5, now(), 'available', '{}');

-- name: JobLeads :one
-- params: client_id
-- Whether a client holds River's leadership (its lease not expired): the
-- singletons that are not periodic jobs ask it before each run.
SELECT count(*) FROM river_leader WHERE leader_id = $1 AND expires_at >= now();
