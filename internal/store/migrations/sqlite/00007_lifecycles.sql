-- +goose Up

-- Lifecycle definitions (lifecycle, API.md Lifecycles): state machines
-- orders follow. states and transfers are the expanded, checked definition
-- (JSON arrays); compact is the compact form it was written in, as sent
-- (JSON text), or '' when it was written in full. The built-ins (simple,
-- service) live in code, not here.
CREATE TABLE lifecycles (
    id            TEXT PRIMARY KEY,
    initial_state TEXT NOT NULL,
    states        TEXT NOT NULL,
    transfers     TEXT NOT NULL,
    compact       TEXT NOT NULL DEFAULT '',
    version       INTEGER NOT NULL,
    create_time   TEXT NOT NULL,
    update_time   TEXT NOT NULL
);

-- +goose Down
DROP TABLE lifecycles;
