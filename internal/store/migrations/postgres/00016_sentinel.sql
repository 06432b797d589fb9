-- +goose Up

-- What the sentinel (deletion-flow seed, issue 11) last decided about each
-- order it watches: the generation and time of the last reconcile event it
-- published, when it last evaluated the order, and whether the order's
-- adapters had converged then. An order is a candidate again when it is
-- new, changed since evaluated_time (its row or any adapter report), was not
-- ready and debounce has passed, or max age has passed: a query finds them
-- without reading the others' rows. The order's removal takes its mark.
CREATE TABLE sentinel_marks (
    order_id       TEXT PRIMARY KEY REFERENCES catalog_item_instances (id) ON DELETE CASCADE,
    generation     BIGINT NOT NULL,
    published_time TIMESTAMPTZ,
    evaluated_time TIMESTAMPTZ NOT NULL,
    evaluated_generation BIGINT NOT NULL,
    ready          BOOLEAN NOT NULL
);

-- The sentinel reads the orders of the service types it watches.
CREATE INDEX catalog_item_instances_service_type ON catalog_item_instances (service_type, id);

-- +goose Down
DROP INDEX catalog_item_instances_service_type;
DROP TABLE sentinel_marks;
