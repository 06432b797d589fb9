-- +goose Up

-- Service types defined through the API (catalog). The built-in ones (vm,
-- container, database, cluster) are not stored: they ship with the binary.
-- schema is a JSON Schema 2020-12 document; required_adapters a JSON array
-- of adapter names; runtime a JSON object or null.
CREATE TABLE service_types (
    id                  TEXT PRIMARY KEY,
    schema              TEXT NOT NULL,
    lifecycle           TEXT NOT NULL,
    identity_attribute  TEXT,
    parent_service_type TEXT,
    on_parent_delete    TEXT NOT NULL,
    required_adapters   TEXT NOT NULL,
    runtime             TEXT NOT NULL,
    version             INTEGER NOT NULL,
    create_time         TEXT NOT NULL,
    update_time         TEXT NOT NULL
);
CREATE INDEX service_types_lifecycle ON service_types (lifecycle);
CREATE INDEX service_types_parent ON service_types (parent_service_type);
CREATE INDEX catalog_item_instances_service_type_state ON catalog_item_instances (service_type, state);

-- +goose Down
DROP INDEX catalog_item_instances_service_type_state;
DROP TABLE service_types;
