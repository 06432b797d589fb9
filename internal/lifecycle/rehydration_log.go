package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/store"
)

// A rehydration is logged on its order in three notes, each in the
// transaction of what it records: its start (placement's, with the
// operation), the order's move onto the new instance (the order's
// reconcile, which queues the old instance's cleanup) and the end of that
// cleanup (the SPRM's cleanup worker, through [Service.CleanupDoneTx]).
// Notes keep the order's version, like reports.

// Triggers of the notes in an order's lifecycle log.
const (
	// TriggerRehydrate: a rehydration of the order started, or the order
	// moved onto the new instance it made.
	TriggerRehydrate = "rehydrate"
	// TriggerCleanup: an instance made for the order was removed from its
	// provider by its cleanup task (the old instance of a rehydration).
	TriggerCleanup = "cleanup"
)

// Cleanup is a deletion still owed to a provider for an instance made for
// an order: its cleanup task, shown on the order to its owner.
type Cleanup struct {
	TaskID       string    `json:"task_id"`
	InstanceID   string    `json:"instance_id"`
	ProviderName string    `json:"provider_name"`
	Status       string    `json:"status"`
	RequestTime  time.Time `json:"request_time"`
}

// Cleanups are the cleanup tasks of orders' instances (the SPRM's queue).
type Cleanups interface {
	// OrderCleanups returns the tasks of the order's instances that are
	// not done, oldest first; none when nothing is being removed.
	OrderCleanups(ctx context.Context, orderID string) ([]Cleanup, error)
}

// cleanupsOf reads what of order id is still being removed; none when
// Config.Cleanups is not set.
func (s *Service) cleanupsOf(ctx context.Context, id string) ([]Cleanup, error) {
	if s.cfg.Cleanups == nil {
		return []Cleanup{}, nil
	}
	c, err := s.cfg.Cleanups.OrderCleanups(ctx, id)
	if c == nil && err == nil {
		c = []Cleanup{}
	}
	return c, err
}

// rehydrationStartedTx logs a rehydration that starts, in placement's
// transaction (placement.RehydrateParams.StartedFunc).
func (s *Service) rehydrationStartedTx(ctx context.Context, tx *store.Tx, r placement.RehydrationStart) error {
	return s.noteTx(ctx, tx, r.OrderID, func(Order) Event {
		return Event{Trigger: TriggerRehydrate, OperationID: r.OperationID, InstanceID: r.NewInstanceID,
			ProviderName: r.ProviderName, Message: fmt.Sprintf("rehydration started: new instance %s on %s replaces %s",
				r.NewInstanceID, r.ProviderName, r.OldInstanceID)}
	})
}

// movedNote is the note of an order that moved onto the new instance of its
// rehydration (c), o as it was before.
func movedNote(o Order, c reconcile.Change) Event {
	return Event{Version: o.Version, Trigger: TriggerRehydrate, From: o.State, To: o.State,
		OperationID: c.OperationID, InstanceID: c.InstanceID, ProviderName: c.ProviderName,
		Message: fmt.Sprintf("new instance %s on %s running; the order moved onto it, and %s on %s is being removed",
			c.InstanceID, c.ProviderName, c.PreviousID, o.ProviderName),
		Changes: map[string]Change{"instance_id": {From: c.PreviousID, To: c.InstanceID},
			"provider_name": {From: o.ProviderName, To: c.ProviderName}}}
}

// CleanupDoneTx logs on the order that the cleanup task of one of its
// instances is done (the instance is gone from its provider), in tx, the
// cleanup worker's (sprm.CleanupRecorder). An order purged meanwhile logs
// nothing.
func (s *Service) CleanupDoneTx(ctx context.Context, tx *store.Tx, orderID string, c Cleanup) error {
	return s.noteTx(ctx, tx, orderID, func(o Order) Event {
		what := "instance"
		if o.InstanceID != c.InstanceID {
			what = "old instance"
		}
		return Event{Trigger: TriggerCleanup, InstanceID: c.InstanceID, ProviderName: c.ProviderName,
			Message: fmt.Sprintf("%s %s on %s retired: cleanup task %s done", what, c.InstanceID, c.ProviderName,
				c.TaskID)}
	})
}

// noteTx locks order id and writes the note that build makes of it in its
// log, at its version, in tx; nothing when the order is gone.
func (s *Service) noteTx(ctx context.Context, tx *store.Tx, id string, build func(Order) Event) error {
	r, err := s.q.OrderLockStatus(ctx, tx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read order %s: %w", id, err)
	}
	o := Order{ID: r.ID, State: r.State, Version: r.Version, InstanceID: r.InstanceID, ProviderName: r.ProviderName}
	e := build(o)
	e.Version, e.From, e.To = o.Version, o.State, o.State
	return s.writeNoteTx(ctx, tx, id, e)
}

// writeNoteTx writes note e in the log of order id, after the events of
// its version, in tx; the caller holds the order's row.
func (s *Service) writeNoteTx(ctx context.Context, tx *store.Tx, id string, e Event) error {
	var changes any
	if len(e.Changes) > 0 {
		changes = store.JSON(e.Changes)
	}
	if _, err := s.q.OrderEventInsertNote(ctx, tx, OrderEventInsertNoteParams{OrderID: id, Version: e.Version,
		Time: s.now(), Trigger: e.Trigger, Source: e.From, Target: e.To, OperationID: e.OperationID,
		InstanceID: e.InstanceID, ProviderName: e.ProviderName, Message: e.Message, Changes: changes}); err != nil {
		return fmt.Errorf("log %s on order %s: %w", e.Trigger, id, err)
	}
	s.changedTx(tx, id)
	return nil
}
