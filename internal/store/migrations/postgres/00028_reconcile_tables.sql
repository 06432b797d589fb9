-- +goose Up

-- One table for the reconcile queue (issue 23). A request to reconcile an
-- order is a row of order_changes: a fact about its resource, or kind
-- 'request' for a bare one (an adapter's report, a child removed). The
-- reconcile takes an order's rows with one DELETE, and a change costs one
-- INSERT, not also an upsert of order_reconciles and its delete.
-- requested_at (was recorded_at) is when the reconcile was asked for, moved
-- on when a sweep hands the order out again.
ALTER TABLE order_changes RENAME COLUMN recorded_at TO requested_at;
ALTER TABLE order_changes ALTER COLUMN instance_id SET DEFAULT '';
INSERT INTO order_changes (order_id, kind, requested_at)
SELECT order_id, 'request', requested_at FROM order_reconciles;
DROP TABLE order_reconciles;
-- Every row is inserted and soon deleted: vacuum once a thousand are dead,
-- not at the default 20% of the table, so the take's index scans never
-- wade through dead tuples.
ALTER TABLE order_changes SET (autovacuum_vacuum_scale_factor = 0.0, autovacuum_vacuum_threshold = 1000);

-- +goose Down
ALTER TABLE order_changes RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold);
CREATE TABLE order_reconciles (
    order_id     TEXT PRIMARY KEY,
    requests     BIGINT NOT NULL,
    requested_at TIMESTAMPTZ NOT NULL
);
INSERT INTO order_reconciles (order_id, requests, requested_at)
SELECT order_id, COUNT(*), MIN(requested_at) FROM order_changes GROUP BY order_id;
DELETE FROM order_changes WHERE kind = 'request';
ALTER TABLE order_changes ALTER COLUMN instance_id DROP DEFAULT;
ALTER TABLE order_changes RENAME COLUMN requested_at TO recorded_at;
