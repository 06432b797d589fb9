-- name: AuditInsert :exec
INSERT INTO audit_events (id, time, actor_type, actor_id, actor_token, action, target, project, outcome, request_id, details)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11);

-- name: AuditList :many
-- params: project, project, action, action, target, target, actor, actor, actor, actor, since, until, after_seq, limit
SELECT seq, id, time, actor_type, actor_id, actor_token, action, target, project, outcome, request_id, details
FROM audit_events
-- An admin lists every project's records (project ''); a project admin its
-- own. Records of requests refused before a project was known have none.
WHERE ($1::text = '' OR project = $2)
  AND ($3::text = '' OR action = $4)
  AND ($5::text = '' OR target = $6)
  AND ($7::text = '' OR actor_type || ':' || actor_id = $8 OR actor_id = $9 OR 'token:' || actor_token = $10)
  AND time >= $11 AND time < $12
  AND seq > $13
ORDER BY seq
LIMIT $14;
