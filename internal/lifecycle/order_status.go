package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// The engine is the one observer of resource status (DESIGN §2): these
// methods make *Service a placement.OrderObserver. Each runs in the
// transaction that recorded what it reports.

// ResourceStatusTx mirrors a resource's status on its order and, when the
// status is a deployment outcome for the order's state, fires the state's
// resource transfer (success to the target, failure to the error state).
// A resource the order no longer points at is ignored, and while the order
// waits on an update (PendingInstanceID) only the update's own report
// (st.Updated) counts.
func (s *Service) ResourceStatusTx(ctx context.Context, tx *store.Tx, st placement.ResourceStatus) error {
	o, err := s.lockOrderTx(ctx, tx, st.OrderID)
	if errors.Is(err, ErrOrderNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.InstanceID != st.InstanceID {
		return nil
	}
	if st.Updated && st.Status != provider.StatusFailed {
		// Read the status again now the order is locked: a report that
		// committed while this transaction waited for the lock saw the
		// update still pending and left its outcome to this one.
		cur, err := s.cfg.Placement.ResourceTx(ctx, tx, st.InstanceID)
		if err != nil {
			return err
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
			return err
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
			return err
		}
	}
	if !changed && o.Version == read && o.LastError == lastError {
		return nil
	}
	return s.saveOrderTx(ctx, tx, &o, read)
}

// statusChanges is what st changes of the status o shows, by member; nil
// when nothing. A report without a restart count leaves the count as it is.
func statusChanges(o Order, st placement.ResourceStatus) map[string]Change {
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
	cur, _ := def.State(o.State)
	tr, ok := def.Transfer(o.State, statemachine.TriggerResource)
	if !ok {
		return nil
	}
	failed, ok := outcome(cur, o.Status)
	if !ok {
		return nil
	}
	if cur.PurgeResources && !failed {
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

// ResourceReplacedTx moves the order to its new resource (a rehydration,
// or an update realised by replacement) and reads the new resource's
// status as a report. It returns placement.ErrOrderGone when the order was
// deleted or no longer points at the old resource.
func (s *Service) ResourceReplacedTx(ctx context.Context, tx *store.Tx, r placement.Repoint) error {
	o, err := s.lockOrderTx(ctx, tx, r.OrderID)
	if errors.Is(err, ErrOrderNotFound) {
		return fmt.Errorf("%w: order %s", placement.ErrOrderGone, r.OrderID)
	}
	if err != nil {
		return err
	}
	if o.DeletedAt != nil || o.InstanceID != r.OldInstanceID {
		return fmt.Errorf("%w: order %s", placement.ErrOrderGone, r.OrderID)
	}
	read := o.Version
	o.InstanceID, o.ProviderName, o.Status, o.StatusMessage = r.NewInstanceID, r.ProviderName, r.Status, r.Message
	o.RestartCount = nil // the new instance's count comes with its first report
	if o.PendingInstanceID == r.NewInstanceID {
		o.PendingInstanceID = ""
	}
	if o.PendingInstanceID == "" {
		// The new resource realises the active set: a rehydration ran the
		// policy chain again, and the order shows what it made of the set.
		o.showRunning(o.Attributes.Asked(), r.Spec)
	}
	if o.PendingInstanceID == "" {
		if err := s.resourceOutcomeTx(ctx, tx, &o, 0); err != nil {
			return err
		}
	}
	s.log.InfoContext(ctx, "order repointed", "order_id", o.ID, "old_instance_id", r.OldInstanceID,
		"new_instance_id", r.NewInstanceID, "provider", r.ProviderName)
	return s.saveOrderTx(ctx, tx, &o, read)
}

// ResourceReplacingTx notes that an update planned in place is realised by
// replacement: the order now waits on the new resource.
func (s *Service) ResourceReplacingTx(ctx context.Context, tx *store.Tx, orderID, newInstanceID string) error {
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

// ReplacementFailedTx takes the error edge of the order's resource
// transfer when the replacement it was waiting on could not be created.
// A failed rehydration (nothing was waiting) leaves the order as it is.
func (s *Service) ReplacementFailedTx(ctx context.Context, tx *store.Tx, r placement.Repoint) error {
	o, err := s.lockOrderTx(ctx, tx, r.OrderID)
	if errors.Is(err, ErrOrderNotFound) {
		return nil
	}
	if err != nil || o.PendingInstanceID != r.NewInstanceID {
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
			reason: "replacement " + r.NewInstanceID + " failed: " + r.Message}, 0); err != nil {
			return err
		}
	}
	return s.saveOrderTx(ctx, tx, &o, read)
}

// RehydrateOrder triggers the rehydration of an order (rehydration seed):
// a new instance id is generated and placement rehydrates the order's
// current resource into it from its original intent; the order is
// repointed once the new create is accepted ([Service.ResourceReplacedTx]).
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
		Target: "catalog-item-instances/" + o.ID, RequestKey: requestKey,
	})
}
