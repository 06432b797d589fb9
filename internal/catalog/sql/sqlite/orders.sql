-- name: OrderInsert :exec
INSERT INTO catalog_item_instances (id, project, catalog_item_id, service_type, display_name, labels, user_values,
                                    parent_id, state, lifecycle, version, generation, attributes, instance_id,
                                    provider_name, status, create_time, update_time)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'creating', 'simple', 1, 1, ?, ?, ?, 'PENDING', ?, ?);

-- name: OrderGet :one
SELECT id, project, catalog_item_id, service_type, display_name, labels, user_values, parent_id, state, lifecycle,
       version, generation, attributes, instance_id, provider_name, status, status_message, create_time,
       update_time, deleted_at
FROM catalog_item_instances
WHERE id = ? AND project = ?;

-- name: OrderGetByInstance :one
SELECT id, project, catalog_item_id, service_type, display_name, labels, user_values, parent_id, state, lifecycle,
       version, generation, attributes, instance_id, provider_name, status, status_message, create_time,
       update_time, deleted_at
FROM catalog_item_instances
WHERE instance_id = ?;

-- name: OrderList :many
SELECT id, project, catalog_item_id, service_type, display_name, labels, user_values, parent_id, state, lifecycle,
       version, generation, attributes, instance_id, provider_name, status, status_message, create_time,
       update_time, deleted_at
FROM catalog_item_instances
WHERE project = ?
  AND (? = '' OR service_type = ?)
  AND (? = '' OR state = ?)
  AND (? = '' OR catalog_item_id = ?)
  AND (? OR deleted_at IS NULL)
  AND (create_time, id) > (?, ?)
ORDER BY create_time, id
LIMIT ?;

-- name: OrderMarkDeleted :exec
UPDATE catalog_item_instances
SET deleted_at = ?, generation = generation + 1, state = 'deleting', version = version + 1, update_time = ?
WHERE id = ? AND deleted_at IS NULL;

-- name: OrderSetStatus :exec
UPDATE catalog_item_instances
SET status = ?, status_message = ?, state = ?, version = version + 1, update_time = ?
WHERE id = ? AND version = ?;

-- name: OrderCountLiveByCatalogItem :one
SELECT COUNT(*) FROM catalog_item_instances WHERE catalog_item_id = ? AND state <> 'terminated';

-- name: OrderRepoint :exec
-- Rehydration: the order's current instance becomes the new one.
UPDATE catalog_item_instances
SET instance_id = ?, provider_name = ?, attributes = ?, status = ?, status_message = ?, state = ?,
    version = version + 1, update_time = ?
WHERE id = ? AND instance_id = ? AND version = ?;
