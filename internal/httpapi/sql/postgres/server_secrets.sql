-- name: ServerSecretsInsert :exec
-- The first start's key; a later (or racing) start's insert does nothing.
INSERT INTO server_secrets (id, page_token_key, create_time)
VALUES (1, $1, $2)
ON CONFLICT (id) DO NOTHING;

-- name: ServerSecretsGet :one
SELECT page_token_key
FROM server_secrets
WHERE id = 1;
