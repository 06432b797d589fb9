-- name: ServiceTypeInsert :exec
INSERT INTO service_types (id, schema, lifecycle, identity_attribute, parent_service_type, on_parent_delete,
                           required_adapters, runtime, version, create_time, update_time)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $10);

-- name: ServiceTypeGet :one
SELECT id, schema, lifecycle, identity_attribute, parent_service_type, on_parent_delete, required_adapters, runtime,
       version, create_time, update_time
FROM service_types
WHERE id = $1;

-- name: ServiceTypeLock :one
-- Locks a type for the transaction before changing or deleting it.
SELECT id, schema, lifecycle, identity_attribute, parent_service_type, on_parent_delete, required_adapters, runtime,
       version, create_time, update_time
FROM service_types
WHERE id = $1
FOR UPDATE;

-- name: ServiceTypeList :many
-- Service types page by id alone.
SELECT id, schema, lifecycle, identity_attribute, parent_service_type, on_parent_delete, required_adapters, runtime,
       version, create_time, update_time
FROM service_types
WHERE id > $1
ORDER BY id
LIMIT $2;

-- name: ServiceTypeUpdate :exec
UPDATE service_types
SET schema = $1, lifecycle = $2, identity_attribute = $3, parent_service_type = $4, on_parent_delete = $5,
    required_adapters = $6, runtime = $7, version = version + 1, update_time = $8
WHERE id = $9 AND version = $10;

-- name: ServiceTypeDelete :exec
DELETE FROM service_types WHERE id = $1 AND version = $2;

-- name: ServiceTypeIDsByLifecycle :many
SELECT id FROM service_types WHERE lifecycle = $1 ORDER BY id;

-- name: ServiceTypeIDsByParent :many
SELECT id FROM service_types WHERE parent_service_type = $1 ORDER BY id;

-- name: CatalogItemCountByServiceType :one
SELECT COUNT(*) FROM catalog_items WHERE service_type = $1;
