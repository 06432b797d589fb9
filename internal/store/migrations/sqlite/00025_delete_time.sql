-- +goose Up

-- delete_time is when an instance's deletion was requested (issue 22):
-- deleted_at stays "deletion completed". Rows from before it take the best
-- time known: their queued cleanup's request, their completed deletion, or
-- the last write of one being deleted.
ALTER TABLE service_type_instances ADD COLUMN delete_time TEXT;

UPDATE service_type_instances
SET delete_time = COALESCE(
    (SELECT t.requested_at FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id),
    deleted_at,
    CASE WHEN status = 'DELETING' THEN update_time END)
WHERE deleted_at IS NOT NULL OR status = 'DELETING'
   OR EXISTS (SELECT 1 FROM cleanup_tasks t WHERE t.instance_id = service_type_instances.id);

-- +goose Down
ALTER TABLE service_type_instances DROP COLUMN delete_time;
