-- +goose Up

-- Service registry (sprm): providers register themselves by name.
CREATE TABLE providers (
    id                   TEXT PRIMARY KEY,
    name                 TEXT NOT NULL UNIQUE,
    endpoint             TEXT NOT NULL,
    service_types        TEXT NOT NULL,
    metadata             TEXT NOT NULL,
    capacity             TEXT NOT NULL,
    operations           TEXT NOT NULL,
    status               TEXT NOT NULL,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    health_message       TEXT NOT NULL DEFAULT '',
    last_check_time      TEXT,
    next_check_time      TEXT NOT NULL,
    version              INTEGER NOT NULL,
    create_time          TEXT NOT NULL,
    update_time          TEXT NOT NULL
);
CREATE INDEX providers_create_time ON providers (create_time, id);
CREATE INDEX providers_next_check_time ON providers (next_check_time);

-- Service-type instances: the provider-facing record of each resource.
-- status_observed_time is the observed_time of the last applied report, so
-- an older report is ignored.
CREATE TABLE service_type_instances (
    id                   TEXT PRIMARY KEY,
    project              TEXT NOT NULL,
    name                 TEXT NOT NULL,
    provider_name        TEXT NOT NULL,
    service_type         TEXT NOT NULL,
    spec                 TEXT NOT NULL,
    status               TEXT NOT NULL,
    status_message       TEXT NOT NULL DEFAULT '',
    status_observed_time TEXT,
    version              INTEGER NOT NULL,
    create_time          TEXT NOT NULL,
    update_time          TEXT NOT NULL,
    deleted_at           TEXT
);
CREATE INDEX service_type_instances_project_create_time ON service_type_instances (project, create_time, id);
CREATE INDEX service_type_instances_provider_status ON service_type_instances (provider_name, status);
CREATE INDEX service_type_instances_status_create_time ON service_type_instances (status, create_time);

-- Deferred deletions (rehydration seed): one task per instance.
CREATE TABLE cleanup_tasks (
    id            TEXT PRIMARY KEY,
    instance_id   TEXT NOT NULL UNIQUE,
    provider_name TEXT NOT NULL,
    service_type  TEXT NOT NULL,
    requested_at  TEXT NOT NULL,
    retry_count   INTEGER NOT NULL DEFAULT 0,
    status        TEXT NOT NULL,
    last_attempt  TEXT,
    last_error    TEXT NOT NULL DEFAULT '',
    claimed_until TEXT,
    create_time   TEXT NOT NULL,
    update_time   TEXT NOT NULL
);
CREATE INDEX cleanup_tasks_status_requested_at ON cleanup_tasks (status, requested_at, id);
CREATE INDEX cleanup_tasks_create_time ON cleanup_tasks (create_time, id);

-- +goose Down
DROP TABLE cleanup_tasks;
DROP TABLE service_type_instances;
DROP TABLE providers;
