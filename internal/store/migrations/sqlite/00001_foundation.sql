-- +goose Up
-- Times are fixed-width UTC text (store.FormatTime) so they sort as text.

-- Idempotency-Key records (API.md, Conventions): one per principal and key.
-- status_code is NULL while the first request is still in flight.
CREATE TABLE idempotency_keys (
    principal       TEXT NOT NULL,
    key             TEXT NOT NULL,
    method          TEXT NOT NULL,
    path            TEXT NOT NULL,
    request_hash    TEXT NOT NULL,
    status_code     INTEGER,
    response_header TEXT,
    response_body   BLOB,
    created_at      TEXT NOT NULL,
    locked_until    TEXT NOT NULL,
    expires_at      TEXT NOT NULL,
    PRIMARY KEY (principal, key)
);
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);

-- Long-running operations (AEP-151 style), owned by a project.
CREATE TABLE operations (
    id          TEXT PRIMARY KEY,
    project     TEXT NOT NULL,
    kind        TEXT NOT NULL,
    target      TEXT NOT NULL,
    done        INTEGER NOT NULL DEFAULT 0,
    metadata    TEXT NOT NULL,
    response    TEXT,
    error       TEXT,
    create_time TEXT NOT NULL,
    update_time TEXT NOT NULL
);
CREATE INDEX operations_project_create_time ON operations (project, create_time, id);

-- Transactional outbox: events written with the state change that caused
-- them, published to NATS by the relay after commit.
CREATE TABLE event_outbox (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL,
    subject    TEXT NOT NULL,
    event      TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- +goose Down
DROP TABLE event_outbox;
DROP TABLE operations;
DROP TABLE idempotency_keys;
