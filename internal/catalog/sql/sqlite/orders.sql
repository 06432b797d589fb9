-- The catalog's read-only questions about the orders made from it, answered
-- by its own queries: the lifecycle, which owns orders, sits above the
-- catalog and is never called back. "Live" orders are those not in a state
-- their lifecycle marks deleted (terminal).

-- name: CatalogItemLiveOrders :one
SELECT COUNT(*) FROM catalog_item_instances WHERE catalog_item_id = ? AND NOT terminal;

-- name: ServiceTypeLiveOrders :one
SELECT COUNT(*) FROM catalog_item_instances WHERE service_type = ? AND NOT terminal;

-- name: ServiceTypeLiveAttributes :many
SELECT id, attributes FROM catalog_item_instances WHERE service_type = ? AND NOT terminal ORDER BY id;

-- name: LifecycleExists :one
SELECT COUNT(*) FROM lifecycles WHERE id = ?;
