-- name: AdapterStatusUpsert :one
-- Stores a report unless the stored one is newer: a later generation, or
-- the same generation observed later, and returns it as stored. No row
-- changes, and none is returned, for a stale report.
INSERT INTO order_adapter_statuses (order_id, adapter, observed_generation, observed_time, conditions, data,
                                    create_time, update_time)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (order_id, adapter) DO UPDATE
SET observed_generation = excluded.observed_generation, observed_time = excluded.observed_time,
    conditions = excluded.conditions, data = excluded.data, update_time = excluded.update_time
WHERE excluded.observed_generation > order_adapter_statuses.observed_generation
   OR (excluded.observed_generation = order_adapter_statuses.observed_generation
       AND excluded.observed_time >= order_adapter_statuses.observed_time)
RETURNING order_id, adapter, observed_generation, observed_time, conditions, data, create_time, update_time;

-- name: AdapterStatusList :many
-- params: order_id, after_time, after_adapter, limit
SELECT order_id, adapter, observed_generation, observed_time, conditions, data, create_time, update_time
FROM order_adapter_statuses
WHERE order_id = $1
  AND (create_time, adapter) > ($2, $3)
ORDER BY create_time, adapter
LIMIT $4;

-- name: AdapterStatusAll :many
-- Every stored report of an order, for the deletion gate and Ready.
SELECT order_id, adapter, observed_generation, observed_time, conditions, data, create_time, update_time
FROM order_adapter_statuses
WHERE order_id = $1
ORDER BY adapter;

-- name: AdapterStatusOfOrders :many
-- params: order_ids
-- The reports of a batch of orders (an array of ids), with what a decision
-- about them reads.
SELECT order_id, adapter, observed_generation, conditions
FROM order_adapter_statuses
WHERE order_id = ANY($1);
