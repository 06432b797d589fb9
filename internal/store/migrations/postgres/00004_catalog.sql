-- +goose Up

-- Catalog items (catalog): a service type with default values and the
-- fields a user may or may not set when ordering. defaults is a spec
-- fragment (JSON object); fields a JSON array of field configurations.
CREATE TABLE catalog_items (
    id           TEXT PRIMARY KEY,
    display_name TEXT NOT NULL,
    service_type TEXT NOT NULL,
    defaults     JSONB NOT NULL,
    fields       JSONB NOT NULL,
    version      BIGINT NOT NULL,
    create_time  TIMESTAMPTZ NOT NULL,
    update_time  TIMESTAMPTZ NOT NULL
);
CREATE INDEX catalog_items_create_time ON catalog_items (create_time, id);
CREATE INDEX catalog_items_service_type ON catalog_items (service_type, create_time, id);

-- +goose Down
DROP TABLE catalog_items;
