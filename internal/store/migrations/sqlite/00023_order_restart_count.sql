-- +goose Up

-- The order shows its current instance's restart_count as the provider
-- last reported it (issue 22): NULL while no report carried a count.
ALTER TABLE catalog_item_instances ADD COLUMN restart_count INTEGER;

-- +goose Down
ALTER TABLE catalog_item_instances DROP COLUMN restart_count;
