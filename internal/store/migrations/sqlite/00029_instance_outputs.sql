-- +goose Up
-- The non-secret values a provider gives about an instance (issue 24:
-- host, port, database, ...), as its last create answer, report or read
-- back carried them: NULL while none did. Orders show their current
-- instance's; they are stored here only.
ALTER TABLE service_type_instances ADD COLUMN outputs TEXT;

-- +goose Down
ALTER TABLE service_type_instances DROP COLUMN outputs;
