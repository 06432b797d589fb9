-- +goose Up

-- The token that authenticated an audit record's actor: token names are not
-- unique (a project admin may name its token "admin"), token ids are.
ALTER TABLE audit_events ADD COLUMN actor_token TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE audit_events DROP COLUMN actor_token;
