-- +goose Up

-- An admin's list of every project's orders reads them in (create_time, id)
-- order; without this index it scanned and sorted the whole table on every
-- page (the per-project list has its own index, with project first).
CREATE INDEX catalog_item_instances_create_time ON catalog_item_instances (create_time, id);

-- +goose Down
DROP INDEX catalog_item_instances_create_time;
