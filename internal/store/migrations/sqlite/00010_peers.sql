-- +goose Up

-- The Steward processes sharing this store (package peers). Each renews its
-- lease every second; a process whose lease expired, or whose pid is gone on
-- this host, is dead, and its running jobs and in-flight Idempotency-Keys
-- are taken over at once (issue 8).
CREATE TABLE steward_processes (
    id           TEXT PRIMARY KEY,
    host         TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    started_at   TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL,
    expires_at   TEXT NOT NULL
);

-- holder is the process serving a key's first request ('' before this
-- migration: those fall back to locked_until).
ALTER TABLE idempotency_keys ADD COLUMN holder TEXT NOT NULL DEFAULT '';
CREATE INDEX idempotency_keys_holder ON idempotency_keys (holder) WHERE status_code IS NULL;

-- request_key identifies the request that created an order or started an
-- operation (a hash of principal and Idempotency-Key): a request run again
-- after its process died finds what the first run committed.
ALTER TABLE catalog_item_instances ADD COLUMN request_key TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX catalog_item_instances_request_key ON catalog_item_instances (request_key)
    WHERE request_key <> '';
ALTER TABLE operations ADD COLUMN request_key TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX operations_request_key ON operations (request_key) WHERE request_key <> '';

-- rehydration_operation is the operation a running rehydration answers
-- with ('' for an update realised by replacement), so that a rehydration
-- whose job was given up can still be finished.
ALTER TABLE resources ADD COLUMN rehydration_operation TEXT NOT NULL DEFAULT '';

-- claimed_by is the process whose cleanup worker claimed a task: a task
-- claimed by a dead process is put back at once, not after claimed_until.
ALTER TABLE cleanup_tasks ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE cleanup_tasks DROP COLUMN claimed_by;
ALTER TABLE resources DROP COLUMN rehydration_operation;
DROP INDEX operations_request_key;
ALTER TABLE operations DROP COLUMN request_key;
DROP INDEX catalog_item_instances_request_key;
ALTER TABLE catalog_item_instances DROP COLUMN request_key;
DROP INDEX idempotency_keys_holder;
ALTER TABLE idempotency_keys DROP COLUMN holder;
DROP TABLE steward_processes;
