package sprm

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// InstanceStatus is a change of an instance's status as a [StatusObserver]
// sees it.
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

// StatusObserver is told of an instance's status changes: the status the
// provider answered a create or delete with, a status report (HTTP or
// NATS), and a deletion completed by the cleanup queue. It is called inside
// the transaction that writes the new status, so the observer's own writes
// commit or roll back with it; an error it returns rolls the change back
// (a status report is then retried by its sender). It must not call back
// into the SPRM. Placement and the order flow observe through it (wired in
// internal/server), so the SPRM imports neither.
type StatusObserver interface {
	InstanceStatusChangedTx(ctx context.Context, tx *store.Tx, st InstanceStatus) error
}

// StatusObserverFunc adapts a function to [StatusObserver].
type StatusObserverFunc func(ctx context.Context, tx *store.Tx, st InstanceStatus) error

// InstanceStatusChangedTx calls f.
func (f StatusObserverFunc) InstanceStatusChangedTx(ctx context.Context, tx *store.Tx, st InstanceStatus) error {
	return f(ctx, tx, st)
}

// setStatusTx runs a status update in tx and, when it changed a row, tells
// the observer in the same transaction.
func (s *Service) setStatusTx(ctx context.Context, tx *store.Tx, st InstanceStatus, query string, args ...any) (int64, error) {
	n, err := tx.Exec(ctx, query, args...)
	if err != nil || n == 0 || s.cfg.Observer == nil {
		return n, err
	}
	return n, s.cfg.Observer.InstanceStatusChangedTx(ctx, tx, st)
}

// setStatus is setStatusTx in a transaction of its own, which then reads
// the instance back. The read is in the writing transaction: on SQLite the
// writer's page cache is the only one a stream of writes does not
// invalidate, so a separate read afterwards cost a fresh read transaction
// and its page reads (13% of the CPU of an SPRM create).
func (s *Service) setStatus(ctx context.Context, st InstanceStatus, query string, args ...any) (int64, Instance, error) {
	return s.setStatusIf(ctx, nil, st, query, args...)
}

// setStatusIf is setStatus under an If-Match precondition (see
// checkVersionTx): a nil ifMatch is none, and costs no extra query.
func (s *Service) setStatusIf(ctx context.Context, ifMatch *int64, st InstanceStatus, query string, args ...any) (int64, Instance, error) {
	var n int64
	var in Instance
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := s.checkVersionTx(ctx, tx, st.InstanceID, ifMatch); err != nil {
			return err
		}
		var err error
		if n, err = s.setStatusTx(ctx, tx, st, query, args...); err != nil {
			return err
		}
		in, err = scanInstance(tx.QueryRow(ctx, s.q.Get("InstanceGet"), st.InstanceID, "", ""))
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
	var version int64
	err := tx.QueryRow(ctx, s.q.Get("InstanceLockVersion"), id).Scan(&version)
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
