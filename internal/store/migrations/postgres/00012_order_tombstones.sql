-- +goose Up

-- Tombstones (API.md, AIP-164): an order that was deleted and removed stays
-- readable until expire_time, then the purge sweep deletes it. NULL while
-- the order is not a tombstone.
ALTER TABLE catalog_item_instances ADD COLUMN expire_time TIMESTAMPTZ;
CREATE INDEX catalog_item_instances_expire_time ON catalog_item_instances (expire_time)
    WHERE expire_time IS NOT NULL;
-- Orders being deleted, not yet removed: the deletion sweep and the
-- stuck-deletion metrics read them without scanning every order.
CREATE INDEX catalog_item_instances_deleting ON catalog_item_instances (deleted_at, id)
    WHERE deleted_at IS NOT NULL AND NOT terminal;

-- +goose Down
DROP INDEX catalog_item_instances_deleting;
DROP INDEX catalog_item_instances_expire_time;
ALTER TABLE catalog_item_instances DROP COLUMN expire_time;
