-- name: ServiceTypeInsert :exec
INSERT INTO service_types (id, schema, lifecycle, identity_attribute, parent_service_type, on_parent_delete,
                           required_adapters, runtime, version, create_time, update_time)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?);

-- name: ServiceTypeGet :one
SELECT id, schema, lifecycle, identity_attribute, parent_service_type, on_parent_delete, required_adapters, runtime,
       version, create_time, update_time
FROM service_types
WHERE id = ?;

-- name: ServiceTypeLock :one
-- Reads a type inside a write transaction before changing or deleting it;
-- SQLite's immediate transactions already hold the write lock.
SELECT id, schema, lifecycle, identity_attribute, parent_service_type, on_parent_delete, required_adapters, runtime,
       version, create_time, update_time
FROM service_types
WHERE id = ?;

-- name: ServiceTypeList :many
-- Service types page by id alone.
SELECT id, schema, lifecycle, identity_attribute, parent_service_type, on_parent_delete, required_adapters, runtime,
       version, create_time, update_time
FROM service_types
WHERE id > ?
ORDER BY id
LIMIT CAST(? AS INTEGER);

-- name: ServiceTypeUpdate :exec
UPDATE service_types
SET schema = ?, lifecycle = ?, identity_attribute = ?, parent_service_type = ?, on_parent_delete = ?,
    required_adapters = ?, runtime = ?, version = version + 1, update_time = ?
WHERE id = ? AND version = ?;

-- name: ServiceTypeDelete :exec
DELETE FROM service_types WHERE id = ? AND version = ?;

-- name: ServiceTypeIDsByLifecycle :many
SELECT id FROM service_types WHERE lifecycle = ? ORDER BY id;

-- name: ServiceTypeIDsByParent :many
SELECT id FROM service_types WHERE parent_service_type = ? ORDER BY id;

-- name: CatalogItemCountByServiceType :one
SELECT COUNT(*) FROM catalog_items WHERE service_type = ?;
