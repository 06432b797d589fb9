-- +goose Up

-- Idempotency-Key records (API.md, Conventions): one per principal and key.
-- status_code is NULL while the first request is still in flight.
CREATE TABLE idempotency_keys (
    principal       TEXT NOT NULL,
    key             TEXT NOT NULL,
    method          TEXT NOT NULL,
    path            TEXT NOT NULL,
    request_hash    TEXT NOT NULL,
    status_code     INTEGER,
    response_header JSONB,
    response_body   BYTEA,
    created_at      TIMESTAMPTZ NOT NULL,
    locked_until    TIMESTAMPTZ NOT NULL,
    expires_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (principal, key)
);
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);

-- Long-running operations (AEP-151 style), owned by a project.
CREATE TABLE operations (
    id          TEXT PRIMARY KEY,
    project     TEXT NOT NULL,
    kind        TEXT NOT NULL,
    target      TEXT NOT NULL,
    done        BOOLEAN NOT NULL DEFAULT FALSE,
    metadata    JSONB NOT NULL,
    response    JSONB,
    error       JSONB,
    create_time TIMESTAMPTZ NOT NULL,
    update_time TIMESTAMPTZ NOT NULL
);
CREATE INDEX operations_project_create_time ON operations (project, create_time, id);

-- Transactional outbox: events written with the state change that caused
-- them, published to NATS by the relay after commit.
CREATE TABLE event_outbox (
    seq        BIGSERIAL PRIMARY KEY,
    id         TEXT NOT NULL,
    subject    TEXT NOT NULL,
    event      JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE event_outbox;
DROP TABLE operations;
DROP TABLE idempotency_keys;
