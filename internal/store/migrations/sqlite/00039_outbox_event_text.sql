-- +goose Up

-- PostgreSQL's outbox keeps events as text here, as SQLite's always has.
SELECT 1;

-- +goose Down
SELECT 1;
