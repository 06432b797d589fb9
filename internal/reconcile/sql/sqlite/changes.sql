-- name: ChangeRecord :exec
-- Records a change of an order's resource, or a bare request (kind
-- 'request'), for the order's reconcile.
INSERT INTO order_changes (order_id, kind, instance_id, previous_id, operation_id, provider_name, status,
                           message, restart_count, via, requested_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: ChangeTake :many
-- Takes an order's rows: exactly the rows this transaction sees (a change
-- committed later stays for the reconcile it asked for).
DELETE FROM order_changes WHERE order_id = ?
RETURNING seq, kind, instance_id, previous_id, operation_id, provider_name, status, message, restart_count, via;

-- name: ChangeListWaiting :many
-- params: requested_before, limit
-- Orders whose reconcile was asked for before a time and not taken since.
SELECT order_id FROM order_changes GROUP BY order_id HAVING MIN(requested_at) < ?
ORDER BY MIN(requested_at) LIMIT CAST(? AS INTEGER);

-- name: ChangeRenew :exec
-- A sweep hands the order out: other replicas' sweeps pass it by for a while.
UPDATE order_changes SET requested_at = ? WHERE order_id = ?;
