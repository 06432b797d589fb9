-- +goose Up

-- Bearer tokens (the auth issue). The secret is stored only as its SHA-256:
-- tokens are 256 random bits, so a slow hash would add nothing but cost on
-- every request. A token is revoked, never deleted, so the audit log's
-- actors stay explained.
CREATE TABLE api_tokens (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL,
    role          TEXT NOT NULL,
    project       TEXT NOT NULL,
    provider      TEXT NOT NULL,
    adapter       TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    create_time   TIMESTAMPTZ NOT NULL,
    expire_time   TIMESTAMPTZ,
    revoke_time   TIMESTAMPTZ
);

-- +goose Down
DROP TABLE api_tokens;
