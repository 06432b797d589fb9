-- +goose Up

-- The latest status report of each adapter on an order (deletion-flow seed,
-- issue 9): what the deletion gate and the Ready aggregation read. A report
-- replaces the stored one only when it is not older (generation, then
-- observed time); the order's removal takes its reports with it.
CREATE TABLE order_adapter_statuses (
    order_id            TEXT NOT NULL REFERENCES catalog_item_instances (id) ON DELETE CASCADE,
    adapter             TEXT NOT NULL,
    observed_generation BIGINT NOT NULL,
    observed_time       TIMESTAMPTZ NOT NULL,
    conditions          JSONB NOT NULL,
    data                JSONB NOT NULL,
    create_time         TIMESTAMPTZ NOT NULL,
    update_time         TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (order_id, adapter)
);

-- A parent's deletion gate counts its children not yet removed.
CREATE INDEX catalog_item_instances_parent ON catalog_item_instances (parent_id) WHERE parent_id IS NOT NULL;

-- +goose Down
DROP INDEX catalog_item_instances_parent;
DROP TABLE order_adapter_statuses;
