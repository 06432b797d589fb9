-- +goose Up

-- Provider-reported changes join the order's lifecycle log (issue 22): a
-- report does not move the order's version, so several events may share a
-- version and seq orders them (0 for the transfer that made the version,
-- then each report). reported_by names the provider; changes holds
-- {member: {from, to}} for what the report changed on the order.
ALTER TABLE order_events ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE order_events ADD COLUMN reported_by TEXT NOT NULL DEFAULT '';
ALTER TABLE order_events ADD COLUMN changes JSONB;
ALTER TABLE order_events DROP CONSTRAINT order_events_pkey;
ALTER TABLE order_events ADD PRIMARY KEY (order_id, version, seq);

-- +goose Down
DELETE FROM order_events WHERE seq <> 0;
ALTER TABLE order_events DROP CONSTRAINT order_events_pkey;
ALTER TABLE order_events ADD PRIMARY KEY (order_id, version);
ALTER TABLE order_events DROP COLUMN changes;
ALTER TABLE order_events DROP COLUMN reported_by;
ALTER TABLE order_events DROP COLUMN seq;
