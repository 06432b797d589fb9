-- +goose Up

-- A rehydration joins its order's lifecycle log (issue 46, item 8): its
-- start, the order's move onto the new instance, and the end of the old
-- instance's cleanup. Such an entry keeps the order's version (like a
-- report, it comes after the events of its version, by seq) and says what
-- it is about: the rehydrate operation (operation_id), the instance and its
-- provider, and a sentence (message).
ALTER TABLE order_events ADD COLUMN operation_id TEXT NOT NULL DEFAULT '';
ALTER TABLE order_events ADD COLUMN instance_id TEXT NOT NULL DEFAULT '';
ALTER TABLE order_events ADD COLUMN provider_name TEXT NOT NULL DEFAULT '';
ALTER TABLE order_events ADD COLUMN message TEXT NOT NULL DEFAULT '';

-- The order a cleanup task's instance was made for, so that the order's
-- owner sees what of it is still being removed (GET of the order, by this
-- index) without reading the admins' queue. Tasks queued before it take
-- their instance's.
ALTER TABLE cleanup_tasks ADD COLUMN order_id TEXT NOT NULL DEFAULT '';
UPDATE cleanup_tasks SET order_id = COALESCE(
    (SELECT i.order_id FROM service_type_instances i WHERE i.id = cleanup_tasks.instance_id), '');
CREATE INDEX cleanup_tasks_order ON cleanup_tasks (order_id, create_time, id) WHERE order_id <> '';

-- +goose Down
DROP INDEX cleanup_tasks_order;
ALTER TABLE cleanup_tasks DROP COLUMN order_id;
ALTER TABLE order_events DROP COLUMN message;
ALTER TABLE order_events DROP COLUMN provider_name;
ALTER TABLE order_events DROP COLUMN instance_id;
ALTER TABLE order_events DROP COLUMN operation_id;
