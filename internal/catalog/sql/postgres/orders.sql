-- name: OrderInsert :exec
INSERT INTO catalog_item_instances (id, project, catalog_item_id, service_type, display_name, labels, user_values,
                                    parent_id, state, lifecycle, version, generation, attributes, instance_id,
                                    provider_name, status, create_time, update_time)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'creating', 'simple', 1, 1, $9, $10, $11, 'PENDING', $12, $13);

-- name: OrderGet :one
SELECT id, project, catalog_item_id, service_type, display_name, labels, user_values, parent_id, state, lifecycle,
       version, generation, attributes, instance_id, provider_name, status, status_message, create_time,
       update_time, deleted_at
FROM catalog_item_instances
WHERE id = $1 AND project = $2;

-- name: OrderGetByInstance :one
SELECT id, project, catalog_item_id, service_type, display_name, labels, user_values, parent_id, state, lifecycle,
       version, generation, attributes, instance_id, provider_name, status, status_message, create_time,
       update_time, deleted_at
FROM catalog_item_instances
WHERE instance_id = $1
FOR UPDATE;

-- name: OrderList :many
SELECT id, project, catalog_item_id, service_type, display_name, labels, user_values, parent_id, state, lifecycle,
       version, generation, attributes, instance_id, provider_name, status, status_message, create_time,
       update_time, deleted_at
FROM catalog_item_instances
WHERE project = $1
  AND ($2::text = '' OR service_type = $3)
  AND ($4::text = '' OR state = $5)
  AND ($6::text = '' OR catalog_item_id = $7)
  AND ($8::boolean OR deleted_at IS NULL)
  AND (create_time, id) > ($9, $10)
ORDER BY create_time, id
LIMIT $11;

-- name: OrderMarkDeleted :exec
UPDATE catalog_item_instances
SET deleted_at = $1, generation = generation + 1, state = 'deleting', version = version + 1, update_time = $2
WHERE id = $3 AND deleted_at IS NULL;

-- name: OrderSetStatus :exec
UPDATE catalog_item_instances
SET status = $1, status_message = $2, state = $3, version = version + 1, update_time = $4
WHERE id = $5 AND version = $6;

-- name: OrderCountLiveByCatalogItem :one
SELECT COUNT(*) FROM catalog_item_instances WHERE catalog_item_id = $1 AND state <> 'terminated';

-- name: OrderRepoint :exec
-- Rehydration: the order's current instance becomes the new one.
UPDATE catalog_item_instances
SET instance_id = $1, provider_name = $2, attributes = $3, status = $4, status_message = $5, state = $6,
    version = version + 1, update_time = $7
WHERE id = $8 AND instance_id = $9 AND version = $10;
