-- +goose Up

-- Provider-reported changes join the order's lifecycle log (issue 22): a
-- report does not move the order's version, so several events may share a
-- version and seq orders them (0 for the transfer that made the version,
-- then each report). reported_by names the provider; changes holds
-- {member: {from, to}} for what the report changed on the order.
-- SQLite cannot change a primary key in place: the table is rebuilt.
CREATE TABLE order_events_new (
    order_id    TEXT NOT NULL,
    version     INTEGER NOT NULL,
    seq         INTEGER NOT NULL DEFAULT 0,
    time        TEXT NOT NULL,
    trigger     TEXT NOT NULL,
    source      TEXT NOT NULL,
    target      TEXT NOT NULL,
    operation   TEXT NOT NULL,
    error       TEXT NOT NULL,
    reported_by TEXT NOT NULL DEFAULT '',
    changes     TEXT,
    PRIMARY KEY (order_id, version, seq)
);
INSERT INTO order_events_new (order_id, version, time, trigger, source, target, operation, error)
SELECT order_id, version, time, trigger, source, target, operation, error FROM order_events;
DROP TABLE order_events;
ALTER TABLE order_events_new RENAME TO order_events;

-- +goose Down
CREATE TABLE order_events_old (
    order_id  TEXT NOT NULL,
    version   INTEGER NOT NULL,
    time      TEXT NOT NULL,
    trigger   TEXT NOT NULL,
    source    TEXT NOT NULL,
    target    TEXT NOT NULL,
    operation TEXT NOT NULL,
    error     TEXT NOT NULL,
    PRIMARY KEY (order_id, version)
);
INSERT INTO order_events_old (order_id, version, time, trigger, source, target, operation, error)
SELECT order_id, version, time, trigger, source, target, operation, error FROM order_events WHERE seq = 0;
DROP TABLE order_events;
ALTER TABLE order_events_old RENAME TO order_events;
