package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/store"
)

// eventForceDelete is the trigger of the event a force delete writes.
const eventForceDelete = "force_delete"

// ForceDeleteParams is a `:forceDelete` request.
type ForceDeleteParams struct {
	Reason string `json:"reason"`
	// By names who asked (auth.Principal's "type:id"); it is recorded with
	// the reason.
	By string `json:"-"`
}

// ForceDeleteOrder removes an order being deleted without waiting for its
// deletion gate (API.md `:forceDelete`, an administrator's way out of a
// stuck deletion): the order and every descendant not yet removed move to
// their lifecycle's deleted state in one transaction and become
// tombstones, each with an event naming who forced it and why. A resource
// whose deletion had not been sent to its provider yet (on_delete was
// deferred) is deleted now, so nothing is left running unseen; adapters
// are not waited for. A live order that is not being deleted is
// [ErrOrderNotDeleting]; a tombstone is left as it is.
func (s *Service) ForceDeleteOrder(ctx context.Context, project, ref string, p ForceDeleteParams) error {
	p.Reason = strings.TrimSpace(p.Reason)
	if p.Reason == "" {
		return invalid.New("reason", "is required: say why the deletion may not wait")
	}
	id, err := s.cfg.Orders.Resolve(ctx, project, ref)
	if err != nil {
		return err
	}
	audit.Describe(ctx, "", map[string]any{"reason": p.Reason})
	return s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		o, err := s.lockOrderTx(ctx, tx, id)
		if err != nil {
			return err
		}
		if o.Project != project {
			return ErrOrderNotFound
		}
		switch {
		case o.Terminal:
			return nil
		case o.DeletedAt == nil:
			return fmt.Errorf("%w: order %s: DELETE it first; a force delete only cuts a deletion short",
				ErrOrderNotDeleting, o.ID)
		}
		return s.forceRemoveTx(ctx, tx, &o, p)
	})
}

// forceRemoveTx removes o's descendants, then o.
func (s *Service) forceRemoveTx(ctx context.Context, tx *store.Tx, o *Order, p ForceDeleteParams) error {
	children, err := s.q.OrderListChildrenToForce(ctx, tx, o.ID)
	if err != nil {
		return fmt.Errorf("list children of %s: %w", o.ID, err)
	}
	for _, id := range children {
		child, err := s.lockOrderTx(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := s.forceRemoveTx(ctx, tx, &child, p); err != nil {
			return err
		}
	}
	def, err := s.definition(ctx, tx, o.Lifecycle)
	if err != nil {
		return err
	}
	target := removedState(def, o.State)
	if target.Name == "" {
		return fmt.Errorf("lifecycle %s has no deleted state to force order %s into", o.Lifecycle, o.ID)
	}
	if o.InstanceID != "" {
		r, err := s.cfg.Placement.ResourceTx(ctx, tx, o.InstanceID)
		if err != nil && !errors.Is(err, placement.ErrResourceNotFound) {
			return err
		}
		if err == nil && r.DeletedAt == nil {
			if err := s.cfg.Placement.DeleteTx(ctx, tx, o.InstanceID); err != nil {
				return err
			}
		}
	}
	read, from := o.Version, o.State
	if o.DeletedAt == nil { // a child not marked yet: its deletion starts now
		t := s.now()
		o.DeletedAt = &t
		o.Generation++
	}
	if err := s.removedTx(ctx, tx, o); err != nil {
		return err
	}
	o.State, o.Terminal, o.PendingInstanceID = target.Name, true, ""
	o.Version++
	o.LastError = fmt.Sprintf("force deleted by %s: %s", p.By, p.Reason)
	recordEvent(o, Event{Version: o.Version, Time: s.now(), Trigger: eventForceDelete, From: from, To: target.Name,
		Error: o.LastError})
	s.log.WarnContext(ctx, "order force deleted: its deletion gate was not waited for", "order_id", o.ID,
		"from", from, "to", target.Name, "by", p.By, "reason", p.Reason)
	return s.saveOrderTx(ctx, tx, o, read)
}

// removedState is the deleted state a deletion from state ends in: where
// its purge (reached directly or through on_delete) leads when the
// resource is gone; else the first deleted state that is not a failure;
// else the first deleted state. The zero State when there is none.
func removedState(def statemachine.Definition, state string) statemachine.State {
	for _, from := range []string{state, onDeleteTarget(def, state)} {
		if tr, ok := def.Transfer(from, statemachine.TriggerResource); ok {
			if st, _ := def.State(tr.Target); st.Deleted {
				return st
			}
		}
	}
	var first statemachine.State
	for _, st := range def.States {
		if st.Deleted && st.Label != statemachine.LabelDanger {
			return st
		}
		if st.Deleted && first.Name == "" {
			first = st
		}
	}
	return first
}

func onDeleteTarget(def statemachine.Definition, state string) string {
	if tr, ok := def.Transfer(state, statemachine.TriggerOnDelete); ok {
		return tr.Target
	}
	return ""
}
