-- +goose Up

-- The user values each attribute set of an order was asked with
-- ({"candidate": [...], "active": [...], "rollback": [...]}), moved with the
-- sets by the lifecycle's operations, so that an aborted update or a
-- rollback shows again the user values of the set that runs (issue 22).
-- NULL for an order stored before: each of its sets is taken to have been
-- asked with the values it shows.
ALTER TABLE catalog_item_instances ADD COLUMN user_value_sets JSONB;

-- +goose Down
ALTER TABLE catalog_item_instances DROP COLUMN user_value_sets;
