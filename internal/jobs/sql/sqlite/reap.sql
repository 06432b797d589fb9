-- name: JobRequeueOfDead :exec
-- The jobs a dead process was running (the last client that fetched them is
-- the dead one) run again now; River's attempt count is kept, so a worker
-- still sees its last attempt as the last.
UPDATE river_job
SET state = 'available', scheduled_at = datetime('now', 'subsec')
WHERE state = 'running'
  AND json_extract(attempted_by, '$[#-1]') IN (SELECT value FROM json_each(?));

-- name: JobLeaderOfDeadResign :exec
DELETE FROM river_leader WHERE leader_id IN (SELECT value FROM json_each(?));

-- name: JobPendingForArg :one
-- Whether a job of a kind for one argument value is still to be worked
-- (not completed, cancelled or discarded).
SELECT EXISTS (
    SELECT 1 FROM river_job
    WHERE state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
      AND kind = ? AND json_extract(args, '$.' || ?) = ?
);

-- name: JobInsertPlain :exec
-- A job with River's defaults for everything InsertTx does not set (River's
-- own insert, for the cases this does not cover, is parsed anew on every
-- call by River's SQLite driver).
INSERT INTO river_job (args, created_at, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags)
VALUES (jsonb(?), datetime('now', 'subsec'), ?, ?, jsonb('{}'), ?, ?, datetime('now', 'subsec'), 'available', jsonb('[]'));
