-- +goose Up

-- The service types a provider's token may register for, granted by an
-- admin (a JSON array of ids; ["*"]: any). A provider's service account
-- registered for every type before, and so took other projects' orders.
-- Tokens made before have no grant: their provider's next registration is
-- refused until an admin makes it a token that names its types.
ALTER TABLE api_tokens ADD COLUMN service_types TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE api_tokens DROP COLUMN service_types;
