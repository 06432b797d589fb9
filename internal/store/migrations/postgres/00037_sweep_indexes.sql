-- +goose Up

-- A resource's status stayed PENDING after its first create was answered
-- (its status is read from its instance), so the sweep of stalled creates
-- read every resource ever made, once a minute. A create's answer now
-- moves it off PENDING; this records the answers already given, and the
-- sweep reads a partial index of what still waits.
UPDATE resources SET status = i.status
FROM service_type_instances i
WHERE i.id = resources.instance_id AND resources.status = 'PENDING' AND resources.outcome = ''
  AND resources.rehydration_status IS NULL AND i.status NOT IN ('PENDING', 'UNKNOWN');
CREATE INDEX resources_pending ON resources (update_time)
    WHERE status = 'PENDING' AND outcome = '' AND deleted_at IS NULL AND rehydration_status IS NULL;
-- The same sweep's read of rehydrations running for a while.
CREATE INDEX resources_rehydrating ON resources (update_time) WHERE rehydration_status = 'RUNNING';
-- The sweep of silent repair operations read every operation ever run.
CREATE INDEX repair_operations_unfinished ON repair_operations (update_time) WHERE status IN ('pending', 'running');

-- +goose Down
DROP INDEX repair_operations_unfinished;
DROP INDEX resources_rehydrating;
DROP INDEX resources_pending;
