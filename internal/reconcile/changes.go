package reconcile

import (
	"context"
	"fmt"

	"github.com/stewardhq/steward/internal/store"
)

// ChangeKind says what happened to an order's resource.
type ChangeKind string

// The kinds of [Change].
const (
	// KindStatus: the instance's status changed (the SPRM: a provider's
	// answer, report or resync, a deletion done), or placement decided it
	// (a create given up: FAILED; nothing left to delete: DELETED).
	KindStatus ChangeKind = "status"
	// KindUpdated: an in-place update of the instance was accepted (Status
	// is the instance's since) or refused (Status FAILED).
	KindUpdated ChangeKind = "updated"
	// KindReplacing: an update planned in place will be realised by a
	// replacement, InstanceID, after all.
	KindReplacing ChangeKind = "replacing"
	// KindReplaced: InstanceID, created for the order, replaces PreviousID
	// (a rehydration, or an update realised by replacement). Status is the
	// new instance's when it was recorded.
	KindReplaced ChangeKind = "replaced"
	// KindReplacementFailed: InstanceID could not be created; the order
	// keeps PreviousID.
	KindReplacementFailed ChangeKind = "replacement_failed"

	// kindRequest is a bare request ([Queue.RequestTx]): no fact, the
	// reconcile reads what it needs.
	kindRequest ChangeKind = "request"
)

// Change is one fact about an order's resource, recorded by the domain it
// happened in for the order's reconcile to act on.
type Change struct {
	OrderID    string
	Kind       ChangeKind
	InstanceID string
	// PreviousID is the instance the order had before (KindReplaced,
	// KindReplacementFailed).
	PreviousID string
	// OperationID is the operation that asked for a replacement (a
	// rehydration; "" for an update realised by replacement), finished
	// when the order has moved.
	OperationID string
	// ProviderName is the new instance's provider (KindReplaced).
	ProviderName string
	Status       string
	Message      string
	// RestartCount is a status report's restart count; nil when it had none.
	RestartCount *int64
	// Via says how the provider told the status ("report", "resync"); empty
	// for a status Steward decided.
	Via string
	seq int64
}

// RecordTx records c in tx and asks for its order's reconcile once tx
// commits. A change with no order (an instance created directly through the
// SPRM's API) is not recorded.
func (q *Queue) RecordTx(ctx context.Context, tx *store.Tx, c Change) error {
	if c.OrderID == "" {
		return nil
	}
	if _, err := q.q.ChangeRecord(ctx, tx, ChangeRecordParams{
		OrderID: c.OrderID, Kind: string(c.Kind), InstanceID: c.InstanceID, PreviousID: c.PreviousID,
		OperationID: c.OperationID, ProviderName: c.ProviderName, Status: c.Status, Message: c.Message, RestartCount: c.RestartCount,
		Via: c.Via, RequestedAt: q.now().UTC(),
	}); err != nil {
		return fmt.Errorf("record %s change of order %s: %w", c.Kind, c.OrderID, err)
	}
	tx.AfterCommit(func() { q.handOut(c.OrderID) })
	return nil
}
