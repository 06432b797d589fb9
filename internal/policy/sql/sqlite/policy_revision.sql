-- name: PolicyRevisionBump :one
-- The first statement of every policy change: SQLite's immediate
-- transactions already serialise writers.
UPDATE policy_revision SET revision = revision + 1 WHERE id = 1 RETURNING revision;

-- name: PolicyRevisionGet :one
SELECT revision FROM policy_revision WHERE id = 1;
