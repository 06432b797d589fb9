-- name: ChangeRecord :exec
INSERT INTO order_changes (order_id, kind, instance_id, previous_id, operation_id, provider_name, status,
                           message, restart_count, via, recorded_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11);

-- name: ChangeTake :many
-- Takes an order's recorded changes: exactly the rows this transaction
-- sees (a change committed later stays for the reconcile it asked for).
DELETE FROM order_changes WHERE order_id = $1
RETURNING seq, kind, instance_id, previous_id, operation_id, provider_name, status, message, restart_count, via, recorded_at;
