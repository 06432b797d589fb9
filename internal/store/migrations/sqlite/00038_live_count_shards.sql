-- +goose Up

-- PostgreSQL splits provider_live_instances into shards here, so that
-- concurrent creates on one provider do not queue on its row. SQLite has
-- one writer: its one row per provider never waits, and stays as it is.
SELECT 1;

-- +goose Down
SELECT 1;
