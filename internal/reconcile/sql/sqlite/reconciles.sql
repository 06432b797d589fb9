-- name: ReconcileRequest :one
-- Asks for a reconcile of an order; requests is 1 when no request waited
-- (the caller then queues the job). The update, not DO NOTHING, takes the
-- row's lock on PostgreSQL, so a worker's take waits for this transaction
-- and its read sees what it wrote.
INSERT INTO order_reconciles (order_id, requests, requested_at) VALUES (?, 1, ?)
ON CONFLICT (order_id) DO UPDATE SET requests = order_reconciles.requests + 1
RETURNING requests;

-- name: ReconcileTake :exec
DELETE FROM order_reconciles WHERE order_id = ?;

-- name: ReconcileListWaiting :many
-- Requests that waited longer than their job should have taken.
SELECT order_id FROM order_reconciles WHERE requested_at < ? ORDER BY requested_at LIMIT CAST(? AS INTEGER);

-- name: ReconcileRenew :exec
UPDATE order_reconciles SET requested_at = ? WHERE order_id = ?;
