-- name: ChangeRecord :exec
INSERT INTO order_changes (order_id, kind, instance_id, previous_id, operation_id, provider_name, status,
                           message, restart_count, via, recorded_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: ChangeTake :many
-- Takes an order's recorded changes: exactly the rows this transaction
-- sees (a change committed later stays for the reconcile it asked for).
DELETE FROM order_changes WHERE order_id = ?
RETURNING seq, kind, instance_id, previous_id, operation_id, provider_name, status, message, restart_count, via, recorded_at;
