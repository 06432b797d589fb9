-- name: AuditInsert :exec
INSERT INTO audit_events (id, time, actor_type, actor_id, actor_token, action, target, project, outcome, request_id, details)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: AuditList :many
-- params: project, project, action, action, target, target, actor, actor, actor, actor, since, until, after_seq, limit
SELECT seq, id, time, actor_type, actor_id, actor_token, action, target, project, outcome, request_id, details
FROM audit_events
-- An admin lists every project's records (project ''); a project admin its
-- own. Records of requests refused before a project was known have none.
WHERE (? = '' OR project = ?)
  AND (? = '' OR action = ?)
  AND (? = '' OR target = ?)
  AND (? = '' OR actor_type || ':' || actor_id = ? OR actor_id = ? OR 'token:' || actor_token = ?)
  AND time >= ? AND time < ?
  AND seq > ?
ORDER BY seq
LIMIT CAST(? AS INTEGER);
