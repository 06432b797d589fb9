-- The catalog's read-only question about the lifecycles its types name,
-- answered by its own query: the lifecycle, which owns them, sits above the
-- catalog and is never called back.

-- name: LifecycleExists :one
SELECT COUNT(*) FROM lifecycles WHERE id = ?;
