-- +goose Up

-- The secrets every replica shares, in one row: page_token_key signs page
-- tokens (API.md, Conventions), so a page a replica gave a client opens on
-- any other. The first server to start makes it (INSERT … ON CONFLICT DO
-- NOTHING, then read: a start that loses the race reads the winner's).
CREATE TABLE server_secrets (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    page_token_key BYTEA NOT NULL,
    create_time    TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE server_secrets;
