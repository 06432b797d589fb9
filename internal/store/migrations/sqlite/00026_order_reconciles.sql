-- +goose Up

-- A request to reconcile an order (issue 23): what changes below the
-- lifecycle (an adapter's report, an instance's status) writes its own facts
-- and, in the same transaction, a row here and a job. One row per order
-- while the request waits, so a burst of changes is one reconcile; the
-- worker deletes the row before it reads, and a change committed after that
-- asks again.
CREATE TABLE order_reconciles (
    order_id     TEXT PRIMARY KEY,
    requests     BIGINT NOT NULL,
    requested_at TEXT NOT NULL
);

-- +goose Down
DROP TABLE order_reconciles;
