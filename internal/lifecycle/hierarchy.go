package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/catalog"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/store"
)

// checkParentTx checks a new order's parent_id against its service type
// (API.md, deletion-flow seed): a type that declares parent_service_type
// nests in an order of that type, one that does not has no parent. The
// parent is read locked, so a DELETE of it either runs first (409 here) or
// sees the new child and cascades to it.
func (s *Service) checkParentTx(ctx context.Context, tx *store.Tx, o *Order, st catalog.ServiceType) error {
	hasParent := o.ParentID != nil && *o.ParentID != ""
	switch {
	case !hasParent && st.ParentServiceType == nil:
		o.ParentID = nil
		return nil
	case !hasParent:
		return invalid.New("parent_id", "is required: service type %s nests in an order of service type %s",
			st.ID, *st.ParentServiceType)
	case st.ParentServiceType == nil:
		return invalid.New("parent_id", "must be empty: service type %s declares no parent_service_type", st.ID)
	}
	parent, err := s.lockOrderTx(ctx, tx, *o.ParentID)
	if err != nil || parent.Project != o.Project {
		if err == nil || errors.Is(err, ErrOrderNotFound) {
			return invalid.New("parent_id", "no order %q in project %s", *o.ParentID, o.Project)
		}
		return err
	}
	if parent.ServiceType != *st.ParentServiceType {
		return invalid.New("parent_id", "order %s is of service type %s; service type %s nests in %s",
			parent.ID, parent.ServiceType, st.ID, *st.ParentServiceType)
	}
	if parent.DeletedAt != nil {
		return &ParentDeletingError{ParentID: parent.ID}
	}
	return nil
}

// markDeletedTx starts the deletion of o (the caller saves it): deleted_at
// is set and the generation bumped, its live children are deleted with it
// (or the whole delete is refused, [*ChildrenExistError], when one's type
// restricts it), and its state's on_delete transfer fires; in a state
// without one (a validation under way) it fires as soon as the order
// reaches a state that has one.
func (s *Service) markDeletedTx(ctx context.Context, tx *store.Tx, o *Order, def statemachine.Definition,
	t time.Time) error {
	o.DeletedAt = &t
	o.Generation++
	o.Version++
	recordEvent(o, Event{Version: o.Version, Time: t, Trigger: eventDelete, From: o.State, To: o.State})
	if err := s.deleteChildrenTx(ctx, tx, o, t); err != nil {
		return err
	}
	tr, ok := def.Transfer(o.State, statemachine.TriggerOnDelete)
	if !ok {
		s.log.InfoContext(ctx, "order deletion deferred until its state has an on_delete transfer",
			"order_id", o.ID, "state", o.State)
		return nil
	}
	return s.fireTx(ctx, tx, o, def, step{transfer: tr, trigger: statemachine.TriggerOnDelete}, 0)
}

// deleteChildrenTx deletes, in the parent's transaction, every child of
// parent not yet being deleted, and theirs in turn, with the parent's
// deleted_at: cascade children are marked; a restrict one refuses the
// parent's delete.
func (s *Service) deleteChildrenTx(ctx context.Context, tx *store.Tx, parent *Order, t time.Time) error {
	children, err := s.q.OrderListLiveChildren(ctx, tx, parent.ID)
	if err != nil {
		return fmt.Errorf("list children of %s: %w", parent.ID, err)
	}
	var restricted []string
	for _, c := range children {
		st, _, err := s.serviceType(ctx, c.ServiceType)
		if err != nil {
			return err
		}
		if st.OnParentDelete == catalog.OnParentDeleteRestrict {
			restricted = append(restricted, c.ID)
		}
	}
	if len(restricted) > 0 {
		return &ChildrenExistError{OrderID: parent.ID, Children: restricted}
	}
	for _, c := range children {
		child, err := s.lockOrderTx(ctx, tx, c.ID)
		if err != nil {
			return err
		}
		def, err := s.definition(ctx, tx, child.Lifecycle)
		if err != nil {
			return err
		}
		read := child.Version
		if err := s.markDeletedTx(ctx, tx, &child, def, t); err != nil {
			return err
		}
		if err := s.saveOrderTx(ctx, tx, &child, read); err != nil {
			return err
		}
	}
	if len(children) > 0 {
		s.log.InfoContext(ctx, "order deletion cascades to its children", "order_id", parent.ID,
			"children", len(children))
	}
	return nil
}

// removedTx is what an order's entering a deleted state does besides the
// transfer: a deleted one becomes a tombstone, readable until its
// expire_time, and a parent waiting at its deletion gate checks again.
func (s *Service) removedTx(ctx context.Context, tx *store.Tx, o *Order) error {
	if o.DeletedAt != nil {
		expire := s.now().Add(s.cfg.TombstoneRetention)
		o.ExpireTime = &expire
	}
	return s.queueParentRecheckTx(ctx, tx, o)
}

// purgeBatch bounds the tombstones one purge transaction deletes.
const purgeBatch = 500

// PurgeTombstones deletes the removed orders whose expire_time has passed,
// with their lifecycle logs and adapter reports (AIP-164's purge; run
// periodically). It returns how many it purged.
func (s *Service) PurgeTombstones(ctx context.Context) (int, error) {
	purged := 0
	for {
		n := 0
		err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
			ids, err := s.q.OrderListExpired(ctx, tx, s.now(), purgeBatch)
			if err != nil {
				return fmt.Errorf("list expired tombstones: %w", err)
			}
			for _, id := range ids {
				if _, err := s.q.OrderEventsPurge(ctx, tx, id); err != nil {
					return fmt.Errorf("purge events of %s: %w", id, err)
				}
				if _, err := s.q.OrderPurge(ctx, tx, id); err != nil {
					return fmt.Errorf("purge order %s: %w", id, err)
				}
			}
			n = len(ids)
			return nil
		})
		if err != nil {
			return purged, err
		}
		purged += n
		if n < purgeBatch {
			return purged, nil
		}
	}
}
