-- +goose Up

-- The secrets every replica shares, in one row: page_token_key signs page
-- tokens (API.md, Conventions), so a page a server gave a client opens
-- after its restart. The first start makes it (INSERT … ON CONFLICT DO
-- NOTHING, then read).
CREATE TABLE server_secrets (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    page_token_key BLOB NOT NULL,
    create_time    TEXT NOT NULL
);

-- +goose Down
DROP TABLE server_secrets;
