-- name: SentinelDue :many
-- params: now, after_time, after_id, limit
-- The marks due for a decision by now, in the order they fell due, after
-- (after_time, after_id) (keyset batches), on the sentinel_marks_due
-- index: changed since decided (the triggers of migration 00036 made them
-- due), not ready once debounce passed, or not published for max age. A
-- quiet inventory reads nothing here. Terminal orders' come too, to be
-- parked.
SELECT order_id, generation AS last_generation, published_time, ready AS was_ready, due_time
FROM sentinel_marks
WHERE due_time <= $1 AND (due_time, order_id) > ($2, $3)
ORDER BY due_time, order_id
LIMIT $4;

-- name: SentinelMarked :many
-- params: order_ids
-- Those of a batch of orders (an array of ids) that have a mark.
SELECT order_id FROM sentinel_marks WHERE order_id = ANY($1);

-- name: SentinelMarksDefer :exec
-- params: batch, now
-- Sets the due time of marks the cycle will not decide (a JSON array of
-- {id, due}): null parks a terminal order's mark, a time defers a type no
-- longer watched; a mark a trigger made due again since the cycle started
-- (after $2) is left due.
UPDATE sentinel_marks
SET due_time = v.due
FROM jsonb_to_recordset($1::jsonb) AS v(id text, due timestamptz)
WHERE sentinel_marks.order_id = v.id AND sentinel_marks.due_time <= $2;

-- name: SentinelMarksRepublish :many
-- params: batch, now
-- Records the publishes of a batch (a JSON array of {id, generation, ready,
-- old}) for orders the sentinel had marked, each unless another sentinel
-- published for it since this one read its mark (old, the published_time
-- read, null for none); returns the orders whose mark changed: only those
-- are published. $2 is the time of the publish.
UPDATE sentinel_marks
SET generation = v.generation, published_time = $2, evaluated_time = $2, evaluated_generation = v.generation,
    ready = v.ready,
    -- a change after the cycle's start (a trigger set its time) stays due
    due_time = CASE WHEN sentinel_marks.due_time > $2 THEN LEAST(sentinel_marks.due_time, v.due) ELSE v.due END
FROM jsonb_to_recordset($1::jsonb) AS v(id text, generation bigint, ready boolean, old timestamptz, due timestamptz)
WHERE sentinel_marks.order_id = v.id AND sentinel_marks.published_time IS NOT DISTINCT FROM v.old
RETURNING order_id;

-- name: SentinelMarksEvaluated :exec
-- params: batch, now
-- Records the evaluations of a batch that published nothing (a JSON array
-- of {id, generation, ready}; an order removed since it was read breaks
-- the mark's foreign key); $2 is the evaluation time.
INSERT INTO sentinel_marks (order_id, generation, published_time, evaluated_time, evaluated_generation, ready, due_time)
SELECT v.id, 0, NULL, $2, v.generation, v.ready, v.due
FROM jsonb_to_recordset($1::jsonb) AS v(id text, generation bigint, ready boolean, due timestamptz)
ON CONFLICT (order_id) DO UPDATE
SET evaluated_time = excluded.evaluated_time, evaluated_generation = excluded.evaluated_generation,
    ready = excluded.ready,
    -- a change after the cycle's start (a trigger set its time) stays due
    due_time = CASE WHEN sentinel_marks.due_time > excluded.evaluated_time
                    THEN LEAST(sentinel_marks.due_time, excluded.due_time) ELSE excluded.due_time END;
