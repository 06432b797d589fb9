-- name: OutboxInsert :exec
INSERT INTO event_outbox (id, subject, event, created_at)
VALUES ($1, $2, $3, $4);

-- name: OutboxListOldest :many
SELECT seq, id, subject, event
FROM event_outbox
ORDER BY seq
LIMIT $1;

-- name: OutboxClaimOldest :many
-- The oldest rows no other relay holds, locked until the claiming
-- transaction ends: replicas' relays publish disjoint batches.
SELECT seq, id, subject, event
FROM event_outbox
ORDER BY seq
LIMIT $1
FOR UPDATE SKIP LOCKED;

-- name: OutboxDeleteBySeqs :exec
-- params: seqs
-- Deletes exactly the rows published, given as a JSON array of seqs; never a
-- range: a sequence number is taken at insert, not at commit, so a row with a
-- lower seq may commit after the read.
DELETE FROM event_outbox
WHERE seq IN (SELECT jsonb_array_elements_text($1::jsonb)::bigint);

