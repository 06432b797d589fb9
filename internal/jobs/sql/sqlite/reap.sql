-- River's public API cannot do these (docs/jobs.md); its tests in
-- jobs_test.go fail if River's tables change under them.

-- name: JobRequeueOfDead :exec
-- params: dead_clients
-- The jobs a dead process was running (the last client that fetched them is
-- the dead one) run again now; River's attempt count is kept, so a worker
-- still sees its last attempt as the last.
UPDATE river_job
SET state = 'available', scheduled_at = datetime('now', 'subsec')
WHERE state = 'running'
  AND json_extract(attempted_by, '$[#-1]') IN (SELECT value FROM json_each(?));

-- name: JobLeaderOfDeadResign :exec
-- params: dead_clients
DELETE FROM river_leader WHERE leader_id IN (SELECT value FROM json_each(?));

-- name: JobInsertPlain :exec
-- params: args, kind, max_attempts, priority, queue
-- A job with River's defaults for everything InsertTx does not set (River's
-- own insert, for the cases this does not cover, is parsed anew on every
-- call by River's SQLite driver).
INSERT INTO river_job (args, created_at, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags)
VALUES (jsonb(?), datetime('now', 'subsec'), ?, ?, jsonb('{}'), ?, ?, datetime('now', 'subsec'), 'available', jsonb('[]'));

-- name: JobLeads :one
-- params: client_id
-- Whether a client holds River's leadership (its lease not expired): the
-- singletons that are not periodic jobs ask it before each run.
SELECT count(*) FROM river_leader WHERE leader_id = ? AND expires_at >= datetime('now', 'subsec');
