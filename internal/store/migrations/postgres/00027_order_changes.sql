-- +goose Up

-- Status flows one way (issue 23). What happens below the lifecycle to an
-- order's resource is recorded here by the domain it happens in, in the
-- transaction that makes it happen, with a reconcile request
-- (order_reconciles): an instance's status (the SPRM), a create given up or
-- a replacement done or failed (placement). The lifecycle's reconcile takes
-- an order's rows in seq order and fires its transfers; nothing calls up.
-- kind: status | updated | replacing | replaced | replacement_failed.
CREATE TABLE order_changes (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_id      TEXT NOT NULL,
    kind          TEXT NOT NULL,
    instance_id   TEXT NOT NULL,
    -- replaced / replacement_failed: the instance the order had before,
    -- and the operation that asked for the replacement ('' for an update).
    previous_id   TEXT NOT NULL DEFAULT '',
    operation_id  TEXT NOT NULL DEFAULT '',
    provider_name TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL DEFAULT '',
    message       TEXT NOT NULL DEFAULT '',
    restart_count BIGINT,
    via           TEXT NOT NULL DEFAULT '',
    recorded_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX order_changes_order ON order_changes (order_id, seq);

-- The order an instance was created for (the create's metadata), so the
-- SPRM can record its status changes for that order without asking anyone.
ALTER TABLE service_type_instances ADD COLUMN order_id TEXT NOT NULL DEFAULT '';
UPDATE service_type_instances SET order_id = (
    SELECT r.catalog_item_instance_id FROM resources r WHERE r.instance_id = service_type_instances.id)
WHERE EXISTS (SELECT 1 FROM resources r WHERE r.instance_id = service_type_instances.id);

-- What placement itself decided about a resource (FAILED: its create was
-- given up; DELETED: nothing is left to delete), which outranks the
-- instance's status. Otherwise a resource's status is its instance's, read
-- through, no longer copied here.
ALTER TABLE resources ADD COLUMN outcome TEXT NOT NULL DEFAULT '';
ALTER TABLE resources ADD COLUMN outcome_message TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE resources DROP COLUMN outcome_message;
ALTER TABLE resources DROP COLUMN outcome;
ALTER TABLE service_type_instances DROP COLUMN order_id;
DROP TABLE order_changes;
