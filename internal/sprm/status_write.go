package sprm

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// InstanceStatus is a change of an instance's status.
type InstanceStatus struct {
	InstanceID string
	Status     provider.Status
	Message    string
	// RestartCount is the report's restart count, nil when it had none
	// (and for a status that is not a report).
	RestartCount *int64
	// Via says how the provider told it: [ViaReport] or [ViaResync]; empty
	// for a status Steward itself decided (a create's answer, a cleanup).
	Via string
}

// How a status came from its provider ([InstanceStatus.Via]).
const (
	ViaReport = "report" // a status report: HTTP PUT or NATS
	ViaResync = "resync" // Steward read the instance back ([Service.RunResync])
)

// changeRecorder records, in the caller's transaction, a change of an
// order's resource for the order's reconcile (*reconcile.Queue). The SPRM
// records its own facts there and calls nobody above it: status flows one
// way (DESIGN §2).
type changeRecorder interface {
	RecordTx(ctx context.Context, tx *store.Tx, c reconcile.Change) error
}

// statusWrite is a status update of one instance, run in tx; it returns,
// for each row it changed (none or one), the order the instance was created
// for (empty when none): the write's RETURNING saves the change a read.
type statusWrite func(tx *store.Tx) ([]string, error)

// setStatusTx runs a status update in tx and, when it changed a row of an
// instance created for an order, records the change for that order. It
// returns the rows changed.
func (s *Service) setStatusTx(ctx context.Context, tx *store.Tx, st InstanceStatus, write statusWrite) (int64, error) {
	orders, err := write(tx)
	if err != nil || len(orders) == 0 {
		return 0, err
	}
	return int64(len(orders)), s.recordChangeTx(ctx, tx, orders[0], reconcile.KindStatus, st)
}

// recordChangeTx records st for the order its instance was created for;
// none when orderID is ”.
func (s *Service) recordChangeTx(ctx context.Context, tx *store.Tx, orderID string, kind reconcile.ChangeKind, st InstanceStatus) error {
	if s.cfg.Changes == nil {
		return nil
	}
	return s.cfg.Changes.RecordTx(ctx, tx, reconcile.Change{OrderID: orderID, Kind: kind, InstanceID: st.InstanceID,
		Status: string(st.Status), Message: st.Message, RestartCount: st.RestartCount, Via: st.Via})
}

// setStatus is setStatusTx in a transaction of its own, which then reads
// the instance back. The read is in the writing transaction: on SQLite the
// writer's page cache is the only one a stream of writes does not
// invalidate, so a separate read afterwards cost a fresh read transaction
// and its page reads (13% of the CPU of an SPRM create).
func (s *Service) setStatus(ctx context.Context, st InstanceStatus, write statusWrite) (int64, Instance, error) {
	return s.setStatusIf(ctx, nil, st, write)
}

// setStatusIf is setStatus under an If-Match precondition (see
// checkVersionTx): a nil ifMatch is none, and costs no extra query.
func (s *Service) setStatusIf(ctx context.Context, ifMatch *int64, st InstanceStatus, write statusWrite) (int64, Instance, error) {
	var n int64
	var in Instance
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := s.checkVersionTx(ctx, tx, st.InstanceID, ifMatch); err != nil {
			return err
		}
		var err error
		if n, err = s.setStatusTx(ctx, tx, st, write); err != nil {
			return err
		}
		in, err = instanceFromRow(s.q.InstanceGet(ctx, tx, st.InstanceID, ""))
		return err
	})
	return n, in, err
}

// checkVersionTx holds an If-Match precondition on an instance for the rest
// of tx: ifMatch, when not nil, is the version the caller read. The row is
// locked before the compare, so no other writer can move the version
// between it and tx's writes; a different version is store.ErrStale and tx
// should write nothing.
func (s *Service) checkVersionTx(ctx context.Context, tx *store.Tx, id string, ifMatch *int64) error {
	if ifMatch == nil {
		return nil
	}
	version, err := s.q.InstanceLockVersion(ctx, tx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ErrInstanceNotFound
	case err != nil:
		return fmt.Errorf("lock instance %s: %w", id, err)
	case version != *ifMatch:
		return store.ErrStale
	}
	return nil
}
