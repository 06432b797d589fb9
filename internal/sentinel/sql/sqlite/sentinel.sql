-- name: SentinelCandidates :many
-- params: service_type, after_id, debounce_cutoff, max_age_cutoff, limit
-- The orders of a watched service type that may need a
-- reconcile event, after id (keyset batches): new to the sentinel, changed
-- since it last evaluated them (the row, its generation or an adapter
-- report), not ready when debounce has passed, or not published for max
-- age. The decision itself is the sentinel's CEL rules; this only narrows
-- what they read. $3 is the debounce cutoff, $4 the max-age cutoff.
SELECT o.id, o.project, o.service_type, o.generation, o.state, o.status, o.deleted_at, o.update_time,
       m.order_id IS NOT NULL AS marked, COALESCE(m.generation, 0) AS last_generation, m.published_time,
       COALESCE(m.ready, 0) AS was_ready
FROM catalog_item_instances o
LEFT JOIN sentinel_marks m ON m.order_id = o.id
WHERE o.service_type = ?1
  AND o.terminal = 0
  AND o.id > ?2
  AND (m.order_id IS NULL
       OR o.generation <> m.evaluated_generation
       OR o.update_time > m.evaluated_time
       OR EXISTS (SELECT 1 FROM order_adapter_statuses s
                  WHERE s.order_id = o.id AND s.update_time > m.evaluated_time)
       OR (m.ready = 0 AND COALESCE(m.published_time, m.evaluated_time) <= ?3)
       OR COALESCE(m.published_time, m.evaluated_time) <= ?4)
ORDER BY o.id
LIMIT CAST(?5 AS INTEGER);

-- name: SentinelReports :many
-- params: order_ids
-- The adapter reports of a batch of orders (a JSON array of ids).
SELECT order_id, adapter, observed_generation, conditions
FROM order_adapter_statuses
WHERE order_id IN (SELECT value FROM json_each(?1));

-- name: SentinelMarksRepublish :many
-- params: batch, now
-- Records the publishes of a batch (a JSON array of {id, generation, ready,
-- old}) for orders the sentinel had marked, each unless another sentinel
-- published for it since this one read its mark (old, the published_time
-- read, null for none); returns the orders whose mark changed: only those
-- are published. ?2 is the time of the publish.
UPDATE sentinel_marks
SET generation = v.generation, published_time = ?2, evaluated_time = ?2, evaluated_generation = v.generation,
    ready = v.ready
FROM (SELECT json_extract(value, '$.id') AS id, json_extract(value, '$.generation') AS generation,
             json_extract(value, '$.ready') AS ready, json_extract(value, '$.old') AS old
      FROM json_each(?1)) AS v
WHERE sentinel_marks.order_id = v.id AND sentinel_marks.published_time IS v.old
RETURNING order_id;

-- name: SentinelMarksFirstPublish :many
-- params: batch, now
-- Records the first publishes of a batch (a JSON array of {id, generation,
-- ready}) for orders the sentinel had no mark of; an order that has one by
-- now (another sentinel's) or is gone is left out. Returns the orders
-- marked.
INSERT INTO sentinel_marks (order_id, generation, published_time, evaluated_time, evaluated_generation, ready)
SELECT v.id, v.generation, ?2, ?2, v.generation, v.ready
FROM (SELECT json_extract(value, '$.id') AS id, json_extract(value, '$.generation') AS generation,
             json_extract(value, '$.ready') AS ready
      FROM json_each(?1)) AS v
WHERE EXISTS (SELECT 1 FROM catalog_item_instances o WHERE o.id = v.id)
ON CONFLICT (order_id) DO NOTHING
RETURNING order_id;

-- name: SentinelMarksEvaluated :exec
-- params: batch, now
-- Records the evaluations of a batch that published nothing (a JSON array
-- of {id, generation, ready}); ?2 is the evaluation time.
INSERT INTO sentinel_marks (order_id, generation, published_time, evaluated_time, evaluated_generation, ready)
SELECT v.id, 0, NULL, ?2, v.generation, v.ready
FROM (SELECT json_extract(value, '$.id') AS id, json_extract(value, '$.generation') AS generation,
             json_extract(value, '$.ready') AS ready
      FROM json_each(?1)) AS v
WHERE EXISTS (SELECT 1 FROM catalog_item_instances o WHERE o.id = v.id)
ON CONFLICT (order_id) DO UPDATE
SET evaluated_time = excluded.evaluated_time, evaluated_generation = excluded.evaluated_generation,
    ready = excluded.ready;
