-- name: PolicyInsert :exec
INSERT INTO policies (id, display_name, policy_type, priority, label_selector, rego_code, enabled,
                      version, create_time, update_time)
VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9);

-- name: PolicyGet :one
SELECT id, display_name, policy_type, priority, label_selector, rego_code, enabled, version, create_time, update_time
FROM policies
WHERE id = $1;

-- name: PolicyList :many
-- params: policy_type, policy_type, enabled, enabled, after_time, after_id, limit
SELECT id, display_name, policy_type, priority, label_selector, rego_code, enabled, version, create_time, update_time
FROM policies
WHERE ($1::text = '' OR policy_type = $2)
  AND ($3::boolean IS NULL OR enabled = $4)
  AND (create_time, id) > ($5, $6)
ORDER BY create_time, id
LIMIT $7;

-- name: PolicyListEnabled :many
-- The chain: every enabled policy (a few hundred at most); Go orders them.
SELECT id, display_name, policy_type, priority, label_selector, rego_code, enabled, version, create_time, update_time
FROM policies
WHERE enabled;

-- name: PolicyListClashes :many
-- Policies that hold the name or the priority wanted in a level.
SELECT id, display_name, policy_type, priority, label_selector, rego_code, enabled, version, create_time, update_time
FROM policies
WHERE id <> $1 AND policy_type = $2 AND (priority = $3 OR display_name = $4);

-- name: PolicyUpdate :exec
UPDATE policies
SET display_name = $1, priority = $2, label_selector = $3, rego_code = $4, enabled = $5,
    version = version + 1, update_time = $6
WHERE id = $7 AND version = $8;

-- name: PolicyDelete :exec
DELETE FROM policies WHERE id = $1 AND version = $2;
