package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// The engine is the one reader of what happens to orders' resources
// (DESIGN §2): the SPRM and placement record it as reconcile changes, and
// the order's reconcile applies them here, in its transaction, in the
// order they were recorded.

// resourceStatus is a status change of an order's resource.
type resourceStatus struct {
	InstanceID   string
	Status       provider.Status
	Message      string
	RestartCount *int64
	// Via says how the provider told it ("report", "resync"); empty for a
	// status Steward decided.
	Via string
	// Updated marks the outcome of an in-place update: accepted (the
	// status is the instance's since) or refused (FAILED).
	Updated bool
}

// orderSeen is what a change's applier saw of its order, locked, once it
// was done: whether it is being deleted and not removed yet. It saves the
// reconcile a read of the order for its deletion gate.
type orderSeen struct {
	read          bool // the applier read the order; false: the reconcile reads it
	awaitsRemoval bool
}

func seenOrder(o Order) orderSeen { return orderSeen{read: true, awaitsRemoval: o.awaitsRemoval()} }

// applyChangeTx applies one recorded change of an order's resource.
func (s *Service) applyChangeTx(ctx context.Context, tx *store.Tx, c reconcile.Change) (orderSeen, error) {
	switch c.Kind {
	case reconcile.KindStatus, reconcile.KindUpdated:
		return s.resourceStatusTx(ctx, tx, c.OrderID, resourceStatus{InstanceID: c.InstanceID,
			Status: provider.Status(c.Status), Message: c.Message, RestartCount: c.RestartCount, Via: c.Via,
			Updated: c.Kind == reconcile.KindUpdated})
	case reconcile.KindReplacing:
		return orderSeen{}, s.resourceReplacingTx(ctx, tx, c.OrderID, c.InstanceID)
	case reconcile.KindReplaced:
		return orderSeen{}, s.resourceReplacedTx(ctx, tx, c)
	case reconcile.KindReplacementFailed:
		return orderSeen{}, s.replacementFailedTx(ctx, tx, c)
	}
	s.log.WarnContext(ctx, "unknown change of an order's resource; ignored", "order_id", c.OrderID, "kind", c.Kind)
	return orderSeen{}, nil
}

// resourceStatusTx records a resource's status on its order and, when the
// status is a deployment outcome for the order's state, fires the state's
// resource transfer (success to the target, failure to the error state).
// A resource the order no longer points at is ignored, and while the order
// waits on an update (PendingInstanceID) only the update's own outcome
// (st.Updated) counts.
func (s *Service) resourceStatusTx(ctx context.Context, tx *store.Tx, orderID string, st resourceStatus) (orderSeen, error) {
	if !st.Updated {
		if seen, done, err := s.statusOnlyTx(ctx, tx, orderID, st); err != nil || done {
			return seen, err
		}
	}
	o, err := s.lockOrderTx(ctx, tx, orderID)
	if errors.Is(err, ErrOrderNotFound) {
		return orderSeen{read: true}, nil
	}
	if err != nil {
		return orderSeen{}, err
	}
	if o.InstanceID != st.InstanceID {
		return seenOrder(o), nil
	}
	if st.Updated && st.Status != provider.StatusFailed {
		// The status the update's outcome was recorded with may be older
		// than a report recorded before it: the status is read again.
		cur, err := s.cfg.Placement.ResourceTx(ctx, tx, st.InstanceID)
		if err != nil {
			return orderSeen{}, err
		}
		st.Status, st.Message = cur.Status, cur.StatusMessage
	}
	read, lastError := o.Version, o.LastError
	changes := statusChanges(o, st)
	changed := len(changes) > 0
	if changed && st.Via != "" {
		// What the provider told is kept in the log (the order's version
		// does not move: a report changes no intent).
		if err := s.recordReportTx(ctx, tx, o.ID, Event{Version: read, Time: s.now(), Trigger: st.Via,
			From: o.State, To: o.State, ReportedBy: o.ProviderName, Changes: changes}); err != nil {
			return orderSeen{}, err
		}
	}
	o.Status, o.StatusMessage = st.Status, st.Message
	if st.RestartCount != nil {
		o.RestartCount = st.RestartCount
	}
	if o.PendingInstanceID == o.InstanceID && st.Updated {
		o.PendingInstanceID = ""
		changed = true
	}
	if o.PendingInstanceID == "" {
		if err := s.resourceOutcomeTx(ctx, tx, &o, 0); err != nil {
			return orderSeen{}, err
		}
	}
	if !changed && o.Version == read && o.LastError == lastError {
		return seenOrder(o), nil
	}
	return seenOrder(o), s.saveOrderTx(ctx, tx, &o, read)
}

// statusOnlyTx applies a status change that moves nothing but the
// order's status, as most reports are (RUNNING while up fires up's
// resource transfer back to up: no move), reading and writing only the
// order's status columns. done is false when the change may move the
// order: resourceStatusTx then reads the whole order and applies it.
func (s *Service) statusOnlyTx(ctx context.Context, tx *store.Tx, orderID string, st resourceStatus) (seen orderSeen, done bool, err error) {
	r, err := s.q.OrderLockStatus(ctx, tx, orderID)
	if errors.Is(err, store.ErrNotFound) {
		return orderSeen{read: true}, true, nil
	}
	if err != nil {
		return orderSeen{}, false, fmt.Errorf("read order %s: %w", orderID, err)
	}
	o := Order{ID: r.ID, Lifecycle: r.Lifecycle, State: r.State, Version: r.Version, InstanceID: r.InstanceID,
		PendingInstanceID: r.PendingInstanceID, ProviderName: r.ProviderName, Status: provider.Status(r.Status),
		StatusMessage: r.StatusMessage, RestartCount: r.RestartCount, DeletedAt: r.DeletedAt, Terminal: r.Terminal}
	if o.InstanceID != st.InstanceID {
		return seenOrder(o), true, nil
	}
	if o.PendingInstanceID == "" {
		def, err := s.definition(ctx, tx, o.Lifecycle)
		if err != nil {
			return orderSeen{}, false, err
		}
		if tr, failed, fires := resourceOutcome(def, o.State, st.Status); fires &&
			(failed || tr.Target != o.State || tr.TargetOperation != "" || purges(def, o.State)) {
			return orderSeen{}, false, nil
		}
	}
	changes := statusChanges(o, st)
	if len(changes) == 0 {
		return seenOrder(o), true, nil
	}
	at := s.now()
	if st.Via != "" {
		if err := s.recordReportTx(ctx, tx, o.ID, Event{Version: o.Version, Time: at, Trigger: st.Via,
			From: o.State, To: o.State, ReportedBy: o.ProviderName, Changes: changes}); err != nil {
			return orderSeen{}, false, err
		}
	}
	if st.RestartCount != nil {
		o.RestartCount = st.RestartCount
	}
	n, err := s.q.OrderSaveStatus(ctx, tx, OrderSaveStatusParams{Status: string(st.Status), StatusMessage: st.Message,
		RestartCount: o.RestartCount, UpdateTime: at, ID: o.ID, ReadVersion: o.Version})
	if err == nil && n == 0 {
		err = store.ErrStale
	}
	if err != nil {
		return orderSeen{}, false, fmt.Errorf("save status of order %s: %w", o.ID, err)
	}
	s.changedTx(tx, o.ID)
	return seenOrder(o), true, nil
}

// statusChanges is what st changes of the status o shows, by member; nil
// when nothing. A report without a restart count leaves the count as it is.
func statusChanges(o Order, st resourceStatus) map[string]Change {
	var c map[string]Change
	add := func(member string, from, to any) {
		if c == nil {
			c = make(map[string]Change, 3)
		}
		c[member] = Change{From: from, To: to}
	}
	if o.Status != st.Status {
		add("status", string(o.Status), string(st.Status))
	}
	if o.StatusMessage != st.Message {
		add("status_message", o.StatusMessage, st.Message)
	}
	if st.RestartCount != nil && (o.RestartCount == nil || *o.RestartCount != *st.RestartCount) {
		var from any
		if o.RestartCount != nil {
			from = *o.RestartCount
		}
		add("restart_count", from, *st.RestartCount)
	}
	return c
}

// resourceOutcomeTx fires the resource transfer of o's state for o's
// status, when that status is an outcome.
func (s *Service) resourceOutcomeTx(ctx context.Context, tx *store.Tx, o *Order, depth int) error {
	def, err := s.definition(ctx, tx, o.Lifecycle)
	if err != nil {
		return err
	}
	tr, failed, ok := resourceOutcome(def, o.State, o.Status)
	if !ok {
		return nil
	}
	if cur, _ := def.State(o.State); cur.PurgeResources && !failed {
		return s.finishDeletionTx(ctx, tx, o, def, cur, depth)
	}
	reason := ""
	if failed {
		reason = fmt.Sprintf("resource %s is %s", o.InstanceID, o.Status)
		if o.StatusMessage != "" {
			reason += ": " + o.StatusMessage
		}
	}
	return s.fireTx(ctx, tx, o, def,
		step{transfer: tr, trigger: statemachine.TriggerResource, failed: failed, reason: reason}, depth)
}

// resourceOutcome is the resource transfer that status fires in state, if
// any, and whether it takes the error edge.
func resourceOutcome(def statemachine.Definition, state string, status provider.Status) (tr statemachine.Transfer, failed, ok bool) {
	tr, ok = def.Transfer(state, statemachine.TriggerResource)
	if !ok {
		return tr, false, false
	}
	cur, _ := def.State(state)
	failed, ok = outcome(cur, status)
	return tr, failed, ok
}

// purges reports whether state deletes the order's resources (its
// outcome finishes the deletion).
func purges(def statemachine.Definition, state string) bool {
	cur, _ := def.State(state)
	return cur.PurgeResources
}

// resourceReplacedTx moves the order to its new resource (a rehydration,
// or an update realised by replacement), has placement retire the old one
// and finish the operation, and takes the new resource's current status. An order deleted meanwhile, or no longer on the old resource,
// keeps what it has, and placement deletes the new resource instead.
func (s *Service) resourceReplacedTx(ctx context.Context, tx *store.Tx, c reconcile.Change) error {
	o, err := s.lockOrderTx(ctx, tx, c.OrderID)
	if err != nil && !errors.Is(err, ErrOrderNotFound) {
		return err
	}
	if err != nil || o.DeletedAt != nil || o.InstanceID != c.PreviousID {
		return s.cfg.Placement.AbandonReplacementTx(ctx, tx, c)
	}
	next, err := s.cfg.Placement.ResourceTx(ctx, tx, c.InstanceID)
	if err != nil {
		return err
	}
	if err := s.cfg.Placement.CompleteReplacementTx(ctx, tx, c); err != nil {
		return err
	}
	if c.OperationID != "" { // a rehydration's, logged (an update's transfer logs itself)
		if err := s.writeNoteTx(ctx, tx, o.ID, movedNote(o, c)); err != nil {
			return err
		}
	}
	read := o.Version
	// The new resource's status now, not as the change recorded it: a
	// status change of the new instance committed meanwhile was skipped
	// (the order was not on it yet), and may have been recorded before the
	// replacement was and read by it still unchanged.
	o.InstanceID, o.ProviderName, o.Status, o.StatusMessage = c.InstanceID, c.ProviderName, next.Status, next.StatusMessage
	o.RestartCount = nil // the new instance's count comes with its first report
	if o.PendingInstanceID == c.InstanceID {
		o.PendingInstanceID = ""
	}
	if o.PendingInstanceID == "" {
		// The new resource realises the active set: a rehydration ran the
		// policy chain again, and the order shows what it made of the set.
		o.showRunning(o.Attributes.Asked(), next.ValidatedRequest)
		if err := s.resourceOutcomeTx(ctx, tx, &o, 0); err != nil {
			return err
		}
	}
	s.log.InfoContext(ctx, "order repointed", "order_id", o.ID, "old_instance_id", c.PreviousID,
		"new_instance_id", c.InstanceID, "provider", c.ProviderName)
	return s.saveOrderTx(ctx, tx, &o, read)
}

// resourceReplacingTx notes that an update planned in place is realised by
// replacement: the order now waits on the new resource.
func (s *Service) resourceReplacingTx(ctx context.Context, tx *store.Tx, orderID, newInstanceID string) error {
	o, err := s.lockOrderTx(ctx, tx, orderID)
	if errors.Is(err, ErrOrderNotFound) {
		return nil
	}
	if err != nil || o.PendingInstanceID != o.InstanceID {
		return err
	}
	read := o.Version
	o.PendingInstanceID = newInstanceID
	return s.saveOrderTx(ctx, tx, &o, read)
}

// replacementFailedTx takes the error edge of the order's resource
// transfer when the replacement it was waiting on could not be created.
// A failed rehydration (nothing was waiting) leaves the order as it is.
func (s *Service) replacementFailedTx(ctx context.Context, tx *store.Tx, c reconcile.Change) error {
	o, err := s.lockOrderTx(ctx, tx, c.OrderID)
	if errors.Is(err, ErrOrderNotFound) {
		return nil
	}
	if err != nil || o.PendingInstanceID != c.InstanceID {
		return err
	}
	read := o.Version
	o.PendingInstanceID = ""
	def, err := s.definition(ctx, tx, o.Lifecycle)
	if err != nil {
		return err
	}
	if tr, ok := def.Transfer(o.State, statemachine.TriggerResource); ok {
		if err := s.fireTx(ctx, tx, &o, def, step{transfer: tr, trigger: statemachine.TriggerResource, failed: true,
			reason: "replacement " + c.InstanceID + " failed: " + c.Message}, 0); err != nil {
			return err
		}
	}
	return s.saveOrderTx(ctx, tx, &o, read)
}

// RehydrateOrder triggers the rehydration of an order (rehydration seed):
// a new instance id is generated and placement rehydrates the order's
// current resource into it from its original intent; the order is
// repointed by its reconcile once the new instance runs.
func (s *Service) RehydrateOrder(ctx context.Context, project, ref, requestKey string) (operations.Operation, error) {
	o, err := s.Order(ctx, project, ref)
	if err != nil {
		return operations.Operation{}, err
	}
	if o.DeletedAt != nil {
		return operations.Operation{}, fmt.Errorf("%w: order %s", ErrOrderDeleting, o.ID)
	}
	if o.InstanceID == "" {
		return operations.Operation{}, fmt.Errorf("%w: order %s has no resource yet", ErrInvalidState, o.ID)
	}
	return s.cfg.Placement.Rehydrate(ctx, placement.RehydrateParams{
		Project: project, InstanceID: o.InstanceID, NewInstanceID: store.NewID(),
		Target: "catalog-item-instances/" + o.ID, RequestKey: requestKey, StartedFunc: s.rehydrationStartedTx,
	})
}
