-- name: PolicyInsert :exec
INSERT INTO policies (id, display_name, policy_type, priority, label_selector, rego_code, enabled,
                      version, create_time, update_time)
VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?);

-- name: PolicyGet :one
SELECT id, display_name, policy_type, priority, label_selector, rego_code, enabled, version, create_time, update_time
FROM policies
WHERE id = ?;

-- name: PolicyList :many
-- params: policy_type, policy_type, enabled, enabled, after_time, after_id, limit
SELECT id, display_name, policy_type, priority, label_selector, rego_code, enabled, version, create_time, update_time
FROM policies
WHERE (? = '' OR policy_type = ?)
  AND (? IS NULL OR enabled = ?)
  AND (create_time, id) > (?, ?)
ORDER BY create_time, id
LIMIT CAST(? AS INTEGER);

-- name: PolicyListEnabled :many
-- The chain: every enabled policy (a few hundred at most); Go orders them.
SELECT id, display_name, policy_type, priority, label_selector, rego_code, enabled, version, create_time, update_time
FROM policies
WHERE enabled = 1;

-- name: PolicyListClashes :many
-- Policies that hold the name or the priority wanted in a level.
SELECT id, display_name, policy_type, priority, label_selector, rego_code, enabled, version, create_time, update_time
FROM policies
WHERE id <> ? AND policy_type = ? AND (priority = ? OR display_name = ?);

-- name: PolicyUpdate :exec
UPDATE policies
SET display_name = ?, priority = ?, label_selector = ?, rego_code = ?, enabled = ?,
    version = version + 1, update_time = ?
WHERE id = ? AND version = ?;

-- name: PolicyDelete :exec
DELETE FROM policies WHERE id = ? AND version = ?;
