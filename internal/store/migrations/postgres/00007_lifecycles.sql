-- +goose Up

-- Lifecycle definitions (lifecycle, API.md Lifecycles): state machines
-- orders follow. states and transfers are the expanded, checked definition
-- (JSON arrays); compact is the compact form it was written in, as sent,
-- or '' when it was written in full. compact is TEXT, not JSONB, because
-- JSONB reorders an object's keys and the order of compact.states is the
-- author's. id sorts bytewise (COLLATE "C"), as Go sorts the built-ins
-- that lists merge in. The built-ins (simple, service) live in code, not here.
CREATE TABLE lifecycles (
    id            TEXT COLLATE "C" PRIMARY KEY,
    initial_state TEXT NOT NULL,
    states        JSONB NOT NULL,
    transfers     JSONB NOT NULL,
    compact       TEXT NOT NULL DEFAULT '',
    version       BIGINT NOT NULL,
    create_time   TIMESTAMPTZ NOT NULL,
    update_time   TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE lifecycles;
