-- +goose Up
-- The secret a provider agreed with Steward in its last registration
-- (issue 24): Steward presents it on every call to the provider, which
-- refuses any other caller. Empty for a provider that registered none.
ALTER TABLE providers ADD COLUMN call_token TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE providers DROP COLUMN call_token;
