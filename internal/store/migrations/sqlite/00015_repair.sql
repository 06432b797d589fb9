-- +goose Up

-- A repair worker's token is bound to the one operation it reports on.
ALTER TABLE api_tokens ADD COLUMN operation TEXT NOT NULL DEFAULT '';

-- The runtime of each app instance (an order whose service type declares a
-- runtime), as its provider or a repair worker last reported it.
CREATE TABLE app_runtimes (
    app_instance_id  TEXT PRIMARY KEY,
    project          TEXT NOT NULL,
    state            TEXT NOT NULL,
    observed_time    TEXT NOT NULL,
    update_time      TEXT NOT NULL
);

-- Repair, reconcile and restart operations (runtime-reconcile-repair seed).
-- steps, error and the runtime state seen are JSON.
CREATE TABLE repair_operations (
    id               TEXT PRIMARY KEY,
    project          TEXT NOT NULL,
    app_instance_id  TEXT NOT NULL,
    instance_id      TEXT NOT NULL,
    provider_name    TEXT NOT NULL,
    service_type     TEXT NOT NULL,
    action           TEXT NOT NULL,
    scope            TEXT NOT NULL,
    target_member_id TEXT NOT NULL,
    component_key    TEXT NOT NULL,
    status           TEXT NOT NULL,
    steps            TEXT NOT NULL,
    error            TEXT,
    next_safe_action TEXT NOT NULL,
    idempotency_key  TEXT NOT NULL,
    request_key      TEXT NOT NULL,
    requested_by     TEXT NOT NULL,
    deliver_time     TEXT,
    version          BIGINT NOT NULL,
    create_time      TEXT NOT NULL,
    update_time      TEXT NOT NULL,
    finish_time      TEXT
);

CREATE INDEX repair_operations_by_app ON repair_operations (project, app_instance_id, id);
CREATE INDEX repair_operations_by_request_key ON repair_operations (request_key) WHERE request_key <> '';
-- One unfinished operation per app instance: the second request's insert
-- fails here even when two race.
CREATE UNIQUE INDEX repair_operations_one_running ON repair_operations (app_instance_id)
    WHERE status IN ('pending', 'running');

-- +goose Down
DROP TABLE repair_operations;
DROP TABLE app_runtimes;
ALTER TABLE api_tokens DROP COLUMN operation;
