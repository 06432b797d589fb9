package store

import "github.com/google/uuid"

// NewID returns an id for a row the server names: a UUIDv7 (RFC 9562),
// whose leading bits are the time. New rows then land at the right-hand end
// of every B-tree keyed by their id (the table's primary key, the audit
// log's target index) instead of on a random page each: a group commit
// dirties, and writes to the WAL, a few pages rather than one per row.
// Lists keyed by id also come out in creation order.
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil { // the clock or the random source failed: still unique
		return uuid.NewString()
	}
	return id.String()
}
