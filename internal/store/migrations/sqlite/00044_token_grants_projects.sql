-- +goose Up

-- The projects a provider may serve (a JSON array of project names; ["*"]:
-- every project), granted by an admin on the provider's token and copied to
-- the provider when it registers; placement sends a provider only the
-- orders of the projects it serves. Tokens and providers made before serve
-- every project, as they did.
ALTER TABLE api_tokens ADD COLUMN projects TEXT NOT NULL DEFAULT '["*"]';
ALTER TABLE providers ADD COLUMN projects TEXT NOT NULL DEFAULT '["*"]';

-- A repair worker's tokens are revoked when its operation ends, found by
-- the operation they are bound to.
CREATE INDEX api_tokens_operation ON api_tokens (operation) WHERE operation <> '';

-- +goose Down
DROP INDEX api_tokens_operation;
ALTER TABLE providers DROP COLUMN projects;
ALTER TABLE api_tokens DROP COLUMN projects;
