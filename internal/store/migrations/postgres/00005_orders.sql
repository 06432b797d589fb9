-- +goose Up

-- Orders (catalog): catalog item instances, the user's objects. instance_id
-- is the order's CURRENT resource (ID separation, rehydration seed): the
-- instance id placement and the SPRM know it by. attributes holds the
-- candidate and active specs; status mirrors the current instance's.
CREATE TABLE catalog_item_instances (
    id              TEXT PRIMARY KEY,
    project         TEXT NOT NULL,
    catalog_item_id TEXT NOT NULL,
    service_type    TEXT NOT NULL,
    display_name    TEXT NOT NULL,
    labels          JSONB NOT NULL,
    user_values     JSONB NOT NULL,
    parent_id       TEXT,
    state           TEXT NOT NULL,
    lifecycle       TEXT NOT NULL,
    version         BIGINT NOT NULL,
    generation      BIGINT NOT NULL,
    attributes      JSONB NOT NULL,
    instance_id     TEXT NOT NULL,
    provider_name   TEXT NOT NULL,
    status          TEXT NOT NULL,
    status_message  TEXT NOT NULL DEFAULT '',
    create_time     TIMESTAMPTZ NOT NULL,
    update_time     TIMESTAMPTZ NOT NULL,
    deleted_at      TIMESTAMPTZ
);
CREATE INDEX catalog_item_instances_project_create_time ON catalog_item_instances (project, create_time, id);
CREATE INDEX catalog_item_instances_instance_id ON catalog_item_instances (instance_id);
CREATE INDEX catalog_item_instances_catalog_item_state ON catalog_item_instances (catalog_item_id, state);

-- Resources (placement): one per instance id. original_request is the
-- stored intent (the spec built from the catalog item and the user's
-- values); validated_request is that spec after the policy chain, the one
-- the provider gets. status mirrors the SPRM instance's.
CREATE TABLE resources (
    instance_id              TEXT PRIMARY KEY,
    catalog_item_instance_id TEXT NOT NULL,
    project                  TEXT NOT NULL,
    service_type             TEXT NOT NULL,
    labels                   JSONB NOT NULL,
    original_request         JSONB NOT NULL,
    validated_request        JSONB NOT NULL,
    provider_name            TEXT NOT NULL,
    policy_status            TEXT NOT NULL,
    status                   TEXT NOT NULL,
    status_message           TEXT NOT NULL DEFAULT '',
    create_time              TIMESTAMPTZ NOT NULL,
    update_time              TIMESTAMPTZ NOT NULL,
    deleted_at               TIMESTAMPTZ
);
CREATE INDEX resources_project_create_time ON resources (project, create_time, instance_id);
CREATE INDEX resources_catalog_item_instance ON resources (catalog_item_instance_id);

-- +goose Down
DROP TABLE resources;
DROP TABLE catalog_item_instances;
