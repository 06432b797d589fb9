-- name: PolicyRevisionBump :one
-- The first statement of every policy change: the row lock it takes
-- serialises policy writers across replicas until commit, so each compiles
-- the set it is about to commit against every change before it.
UPDATE policy_revision SET revision = revision + 1 WHERE id = 1 RETURNING revision;

-- name: PolicyRevisionGet :one
SELECT revision FROM policy_revision WHERE id = 1;
