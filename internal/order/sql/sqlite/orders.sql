-- The read side of orders (catalog_item_instances), for the domains below
-- the lifecycle: the lifecycle writes the table and reads its own. "Live"
-- orders are those not in a state their lifecycle marks deleted (terminal).

-- name: OrderIDByIdentity :one
SELECT id FROM catalog_item_instances
WHERE service_type = ? AND identity = ? AND project = ? AND deleted_at IS NULL;

-- name: OrderLockFacts :one
-- What a change from below is checked against, read in its transaction:
-- SQLite's immediate transactions already hold the write lock.
SELECT project, generation, deleted_at, terminal FROM catalog_item_instances WHERE id = ?;

-- name: OrderFacts :one
SELECT project, generation, deleted_at, terminal FROM catalog_item_instances WHERE id = ?;

-- name: OrderAppInstance :one
SELECT id, project, service_type, state, instance_id, provider_name, deleted_at
FROM catalog_item_instances WHERE id = ? AND project = ?;

-- name: OrderLiveOfItem :one
SELECT COUNT(*) FROM catalog_item_instances WHERE catalog_item_id = ? AND NOT terminal;

-- name: OrderLiveOfType :one
SELECT COUNT(*) FROM catalog_item_instances WHERE service_type = ? AND NOT terminal;

-- name: OrderLiveAttributes :many
SELECT id, attributes FROM catalog_item_instances WHERE service_type = ? AND NOT terminal ORDER BY id;

-- name: OrderSummaries :many
-- params: ids
-- A batch of orders by id (a JSON array), on the primary key.
SELECT id, project, service_type, generation, state, status, deleted_at, terminal, create_time, update_time
FROM catalog_item_instances
WHERE id IN (SELECT value FROM json_each(?1));

-- name: OrderSummariesCreatedAfter :many
-- params: service_types, after_time, after_id, limit
-- The live orders of some service types (a JSON array) created after
-- (after_time, after_id), on the (create_time, id) index.
SELECT id, project, service_type, generation, state, status, deleted_at, terminal, create_time, update_time
FROM catalog_item_instances o
WHERE (o.create_time, o.id) > (?2, ?3)
  -- unary +: not on the (service_type, state) index, which would read
  -- every order of the types and sort them
  AND +o.service_type IN (SELECT value FROM json_each(?1))
  AND o.terminal = 0
ORDER BY o.create_time, o.id
LIMIT CAST(?4 AS INTEGER);

-- name: OrdersExisting :many
-- params: ids
-- Those of a batch of ids (a JSON array) that name an order.
SELECT id FROM catalog_item_instances WHERE id IN (SELECT value FROM json_each(?1));
