-- +goose Up

-- One table for the reconcile queue (issue 23). A request to reconcile an
-- order is a row of order_changes: a fact about its resource, or kind
-- 'request' for a bare one (an adapter's report, a child removed). The
-- reconcile takes an order's rows with one DELETE, and a change costs one
-- INSERT, not also an upsert of order_reconciles and its delete: each
-- B-tree page those touched was a page the commit wrote.
-- requested_at (was recorded_at) is when the reconcile was asked for, moved
-- on when a sweep hands the order out again. No AUTOINCREMENT, which also
-- updated sqlite_sequence on every insert: the rowid alone orders an
-- order's changes, since a new row's rowid is above every row still there.
CREATE TABLE order_changes_next (
    seq           INTEGER PRIMARY KEY,
    order_id      TEXT NOT NULL,
    kind          TEXT NOT NULL,
    instance_id   TEXT NOT NULL DEFAULT '',
    previous_id   TEXT NOT NULL DEFAULT '',
    operation_id  TEXT NOT NULL DEFAULT '',
    provider_name TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL DEFAULT '',
    message       TEXT NOT NULL DEFAULT '',
    restart_count BIGINT,
    via           TEXT NOT NULL DEFAULT '',
    requested_at  TEXT NOT NULL
);
INSERT INTO order_changes_next (seq, order_id, kind, instance_id, previous_id, operation_id, provider_name, status,
                                message, restart_count, via, requested_at)
SELECT seq, order_id, kind, instance_id, previous_id, operation_id, provider_name, status, message, restart_count, via,
       recorded_at
FROM order_changes;
INSERT INTO order_changes_next (order_id, kind, requested_at)
SELECT order_id, 'request', requested_at FROM order_reconciles;
DROP TABLE order_changes;
DROP TABLE order_reconciles;
ALTER TABLE order_changes_next RENAME TO order_changes;
CREATE INDEX order_changes_order ON order_changes (order_id, seq);

-- +goose Down
CREATE TABLE order_reconciles (
    order_id     TEXT PRIMARY KEY,
    requests     BIGINT NOT NULL,
    requested_at TEXT NOT NULL
);
INSERT INTO order_reconciles (order_id, requests, requested_at)
SELECT order_id, COUNT(*), MIN(requested_at) FROM order_changes GROUP BY order_id;
DELETE FROM order_changes WHERE kind = 'request';
CREATE TABLE order_changes_prev (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id      TEXT NOT NULL,
    kind          TEXT NOT NULL,
    instance_id   TEXT NOT NULL,
    previous_id   TEXT NOT NULL DEFAULT '',
    operation_id  TEXT NOT NULL DEFAULT '',
    provider_name TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL DEFAULT '',
    message       TEXT NOT NULL DEFAULT '',
    restart_count BIGINT,
    via           TEXT NOT NULL DEFAULT '',
    recorded_at   TEXT NOT NULL
);
INSERT INTO order_changes_prev SELECT * FROM order_changes;
DROP TABLE order_changes;
ALTER TABLE order_changes_prev RENAME TO order_changes;
CREATE INDEX order_changes_order ON order_changes (order_id, seq);
