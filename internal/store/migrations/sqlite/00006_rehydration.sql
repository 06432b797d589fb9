-- +goose Up

-- Rehydration (placement): a resource created by rehydrating another names
-- it in rehydrated_from; rehydration_status is RUNNING until the flow ends
-- (DONE or FAILED). At most one rehydration of an order runs at a time.
-- last_rehydration is the outcome note of the last rehydration attempted
-- FROM the resource (e.g. rejected by policy), as JSON.
ALTER TABLE resources ADD COLUMN rehydrated_from TEXT;
ALTER TABLE resources ADD COLUMN rehydration_status TEXT;
ALTER TABLE resources ADD COLUMN last_rehydration TEXT;
CREATE UNIQUE INDEX resources_one_rehydration ON resources (catalog_item_instance_id)
    WHERE rehydration_status = 'RUNNING';

-- +goose Down
DROP INDEX resources_one_rehydration;
ALTER TABLE resources DROP COLUMN last_rehydration;
ALTER TABLE resources DROP COLUMN rehydration_status;
ALTER TABLE resources DROP COLUMN rehydrated_from;
