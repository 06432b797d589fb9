-- name: CatalogItemInsert :exec
INSERT INTO catalog_items (id, display_name, service_type, defaults, fields, version, create_time, update_time)
VALUES ($1, $2, $3, $4, $5, 1, $6, $7);

-- name: CatalogItemGet :one
SELECT id, display_name, service_type, defaults, fields, version, create_time, update_time
FROM catalog_items
WHERE id = $1;

-- name: CatalogItemLock :one
-- Locks the item for the transaction before changing or deleting it, so a
-- delete's count of live orders and an order's read of the item (FOR SHARE,
-- CatalogItemGetShared) cannot interleave.
SELECT id, display_name, service_type, defaults, fields, version, create_time, update_time
FROM catalog_items
WHERE id = $1
FOR UPDATE;

-- name: CatalogItemGetShared :one
-- Reads an item an order is being built from, inside the order's
-- transaction: a concurrent delete (FOR UPDATE) waits for it.
SELECT id, display_name, service_type, defaults, fields, version, create_time, update_time
FROM catalog_items
WHERE id = $1
FOR SHARE;

-- name: CatalogItemList :many
-- params: service_type, service_type, after_time, after_id, limit
SELECT id, display_name, service_type, defaults, fields, version, create_time, update_time
FROM catalog_items
WHERE ($1::text = '' OR service_type = $2)
  AND (create_time, id) > ($3, $4)
ORDER BY create_time, id
LIMIT $5;

-- name: CatalogItemUpdate :exec
UPDATE catalog_items
SET display_name = $1, defaults = $2, fields = $3, version = version + 1, update_time = $4
WHERE id = $5 AND version = $6;

-- name: CatalogItemDelete :exec
DELETE FROM catalog_items WHERE id = $1 AND version = $2;
