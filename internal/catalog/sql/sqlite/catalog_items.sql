-- name: CatalogItemInsert :exec
INSERT INTO catalog_items (id, display_name, service_type, defaults, fields, version, create_time, update_time)
VALUES (?, ?, ?, ?, ?, 1, ?, ?);

-- name: CatalogItemGet :one
SELECT id, display_name, service_type, defaults, fields, version, create_time, update_time
FROM catalog_items
WHERE id = ?;

-- name: CatalogItemLock :one
-- Reads an item inside a write transaction before changing or deleting it;
-- SQLite's immediate transactions already hold the write lock.
SELECT id, display_name, service_type, defaults, fields, version, create_time, update_time
FROM catalog_items
WHERE id = ?;

-- name: CatalogItemGetShared :one
-- Reads an item an order is being built from, inside the order's
-- transaction; SQLite's immediate transactions already exclude a delete.
SELECT id, display_name, service_type, defaults, fields, version, create_time, update_time
FROM catalog_items
WHERE id = ?;

-- name: CatalogItemList :many
-- params: service_type, service_type, after_time, after_id, limit
SELECT id, display_name, service_type, defaults, fields, version, create_time, update_time
FROM catalog_items
WHERE (? = '' OR service_type = ?)
  AND (create_time, id) > (?, ?)
ORDER BY create_time, id
LIMIT CAST(? AS INTEGER);

-- name: CatalogItemUpdate :exec
UPDATE catalog_items
SET display_name = ?, defaults = ?, fields = ?, version = version + 1, update_time = ?
WHERE id = ? AND version = ?;

-- name: CatalogItemDelete :exec
DELETE FROM catalog_items WHERE id = ? AND version = ?;
