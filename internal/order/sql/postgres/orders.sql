-- The read side of orders (catalog_item_instances), for the domains below
-- the lifecycle: the lifecycle writes the table and reads its own. "Live"
-- orders are those not in a state their lifecycle marks deleted (terminal).

-- name: OrderIDByIdentity :one
SELECT id FROM catalog_item_instances
WHERE service_type = $1 AND identity = $2 AND project = $3 AND deleted_at IS NULL;

-- name: OrderLockFacts :one
-- What a change from below is checked against, read in its transaction
-- and locked, so that the generation holds until the change commits.
SELECT project, generation, deleted_at, terminal FROM catalog_item_instances WHERE id = $1
FOR UPDATE;

-- name: OrderFacts :one
SELECT project, generation, deleted_at, terminal FROM catalog_item_instances WHERE id = $1;

-- name: OrderAppInstance :one
SELECT id, project, service_type, state, instance_id, provider_name, deleted_at
FROM catalog_item_instances WHERE id = $1 AND project = $2;

-- name: OrderLiveOfItem :one
SELECT COUNT(*) FROM catalog_item_instances WHERE catalog_item_id = $1 AND NOT terminal;

-- name: OrderLiveOfType :one
SELECT COUNT(*) FROM catalog_item_instances WHERE service_type = $1 AND NOT terminal;

-- name: OrderLiveAttributes :many
SELECT id, attributes FROM catalog_item_instances WHERE service_type = $1 AND NOT terminal ORDER BY id;

-- name: OrderSummaries :many
-- params: ids
-- A batch of orders by id (an array), on the primary key.
SELECT id, project, service_type, generation, state, status, deleted_at, terminal, create_time, update_time
FROM catalog_item_instances
WHERE id = ANY($1);

-- name: OrderSummariesCreatedAfter :many
-- params: service_types, after_time, after_id, limit
-- The live orders of some service types (an array) created after
-- (after_time, after_id), on the (create_time, id) index.
SELECT id, project, service_type, generation, state, status, deleted_at, terminal, create_time, update_time
FROM catalog_item_instances o
WHERE (o.create_time, o.id) > ($2, $3)
  -- an expression, not on the service type's indexes, which would read
  -- every order of the types and sort them
  AND o.service_type || '' = ANY($1)
  AND NOT o.terminal
ORDER BY o.create_time, o.id
LIMIT $4;

-- name: OrdersExisting :many
-- params: ids
-- Those of a batch of ids (an array) that name an order.
SELECT id FROM catalog_item_instances WHERE id = ANY($1);
