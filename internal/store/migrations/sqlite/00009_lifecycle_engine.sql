-- +goose Up

-- The lifecycle engine (lifecycle) owns orders. terminal is 1 while the
-- order is in a state its lifecycle marks deleted (terminated, rejected):
-- it no longer counts as live. validation is the outcome of the last
-- successful validation of the candidate set (the policy chain's spec and
-- provider), JSON, consumed when the promoted set is realised; null when
-- none is pending. pending_instance_id is the resource that will replace
-- the current one when an update is realised by replacement ('' when none).
-- identity is the value of the service type's identity attribute, unique
-- per type among orders not deleted. last_error says why the last
-- validation or realisation failed.
ALTER TABLE catalog_item_instances ADD COLUMN terminal INTEGER NOT NULL DEFAULT 0;
ALTER TABLE catalog_item_instances ADD COLUMN validation TEXT NOT NULL DEFAULT 'null';
ALTER TABLE catalog_item_instances ADD COLUMN pending_instance_id TEXT NOT NULL DEFAULT '';
ALTER TABLE catalog_item_instances ADD COLUMN identity TEXT;
ALTER TABLE catalog_item_instances ADD COLUMN last_error TEXT NOT NULL DEFAULT '';
UPDATE catalog_item_instances SET terminal = 1 WHERE state = 'terminated';
CREATE UNIQUE INDEX catalog_item_instances_identity ON catalog_item_instances (service_type, identity)
    WHERE identity IS NOT NULL AND deleted_at IS NULL;

-- The lifecycle log: one row per transfer, written in the transfer's
-- transaction. version is the order's version after the transfer.
CREATE TABLE order_events (
    order_id  TEXT NOT NULL,
    version   INTEGER NOT NULL,
    time      TEXT NOT NULL,
    trigger   TEXT NOT NULL,
    source    TEXT NOT NULL,
    target    TEXT NOT NULL,
    operation TEXT NOT NULL,
    error     TEXT NOT NULL,
    PRIMARY KEY (order_id, version)
);

-- +goose Down
DROP TABLE order_events;
DROP INDEX catalog_item_instances_identity;
ALTER TABLE catalog_item_instances DROP COLUMN last_error;
ALTER TABLE catalog_item_instances DROP COLUMN identity;
ALTER TABLE catalog_item_instances DROP COLUMN pending_instance_id;
ALTER TABLE catalog_item_instances DROP COLUMN validation;
ALTER TABLE catalog_item_instances DROP COLUMN terminal;
