-- +goose Up

-- The audit log (API.md, Audit): one row per mutating request and per
-- recorded event, written in the transaction of the change it records.
-- Rows are only ever inserted: no API changes or deletes them. seq, the
-- insertion order, is the only key besides the target's index: each
-- mutating request pays for two appends, not for keeping up unique ids or a
-- time index (a request's record is written once by construction, and
-- records are read in insertion order).
CREATE TABLE audit_events (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT NOT NULL,
    time        TIMESTAMPTZ NOT NULL,
    actor_type  TEXT NOT NULL,
    actor_id    TEXT NOT NULL,
    action      TEXT NOT NULL,
    target      TEXT NOT NULL,
    project     TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    request_id  TEXT NOT NULL,
    details     JSONB NOT NULL
);
CREATE INDEX audit_events_target ON audit_events (target, seq);

-- +goose Down
DROP TABLE audit_events;
