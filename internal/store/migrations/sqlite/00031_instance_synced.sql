-- +goose Up
-- Whether the instance as its provider last found it matches its spec
-- (issue 24, drift): {"in_sync", "differences"} as the provider's last
-- report that said so gave it; NULL while none did. Orders show it as
-- their Synced condition.
ALTER TABLE service_type_instances ADD COLUMN synced TEXT;

-- +goose Down
ALTER TABLE service_type_instances DROP COLUMN synced;
