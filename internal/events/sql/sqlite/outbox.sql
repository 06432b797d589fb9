-- name: OutboxInsert :exec
INSERT INTO event_outbox (id, subject, event, created_at)
VALUES (?, ?, ?, ?);

-- name: OutboxListOldest :many
SELECT seq, id, subject, event
FROM event_outbox
ORDER BY seq
LIMIT CAST(? AS INTEGER);

-- name: OutboxClaimOldest :many
-- Unused: one process writes a SQLite database, so one relay reads its
-- outbox (OutboxListOldest); kept for the parity of the two files.
SELECT seq, id, subject, event
FROM event_outbox
ORDER BY seq
LIMIT CAST(? AS INTEGER);

-- name: OutboxDeleteBySeqs :exec
-- params: seqs
-- Deletes exactly the rows published, given as a JSON array of seqs; never a
-- range, which could cover a row committed after the read.
DELETE FROM event_outbox
WHERE seq IN (SELECT value FROM json_each(?));

