package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/stewardhq/steward/internal/catalog"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/schema"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/store"
)

// change runs fn on the order ref names, locked in one transaction with
// its lifecycle definition, and saves it when fn returns nil. ifMatch, when
// not nil, is the version the caller read: another gives [store.ErrStale].
func (s *Service) change(ctx context.Context, project, ref string, ifMatch *int64,
	fn func(tx *store.Tx, o *Order, def statemachine.Definition) error) (Order, error) {
	id, err := s.cfg.Orders.Resolve(ctx, project, ref)
	if err != nil {
		return Order{}, err
	}
	var o Order
	err = s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if o, err = s.lockOrderTx(ctx, tx, id); err != nil {
			return err
		}
		if o.Project != project {
			return ErrOrderNotFound
		}
		if ifMatch != nil && *ifMatch != o.Version {
			return store.ErrStale
		}
		def, err := s.definition(ctx, tx, o.Lifecycle)
		if err != nil {
			return err
		}
		read := o.Version
		if err := fn(tx, &o, def); err != nil {
			return err
		}
		if err := s.saveOrderTx(ctx, tx, &o, read); err != nil {
			return err
		}
		// The answer is the order as this change left it: read after the
		// commit, a reconcile may already have moved it on (a DELETE was
		// answered "terminated", not "deleting").
		o, err = scanReadOrder(tx.QueryRow(ctx, s.q.orderGet, id, project))
		return err
	})
	if err != nil {
		return Order{}, err
	}
	return o, nil
}

// DeleteOrder starts the deletion of an order and of its descendants, in
// one transaction (API.md: DELETE → 202; see markDeletedTx). Deleting an
// order already deleted returns it unchanged.
func (s *Service) DeleteOrder(ctx context.Context, project, ref string, ifMatch *int64) (Order, error) {
	return s.change(ctx, project, ref, ifMatch, func(tx *store.Tx, o *Order, def statemachine.Definition) error {
		if o.DeletedAt != nil {
			return nil
		}
		return s.markDeletedTx(ctx, tx, o, def, s.now())
	})
}

// OrderPatch is a PATCH of an order: a merge patch of user_values (the
// whole list is replaced; each value is set at its editable field on the
// current attributes) and labels (RFC 7396: null removes a label), and/or
// dict-path edits of the attributes ({"path": "env[name=LOG].value",
// "value": ...}; a null value removes the attribute).
type OrderPatch struct {
	UserValues  []catalog.UserValue `json:"user_values"`
	Labels      map[string]*string  `json:"labels"`
	Edits       []Edit              `json:"edits"`
	DisplayName *string             `json:"display_name"`
}

// Edit sets one attribute at a dict path.
type Edit struct {
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

// UpdateOrder runs a PATCH (LSM on_update): the new attributes, built on
// the active set (or the candidate set before the first promote), must
// change only rw+ attributes ([*AttributeNotUpdatableError] naming each
// other path) and satisfy the service type's schema; they become the
// candidate set and the state's on_update transfer fires ([ErrInvalidState]
// when it has none; [ErrOrderDeleting] once deleted). A PATCH of labels or
// display_name alone changes them without a transfer.
func (s *Service) UpdateOrder(ctx context.Context, project, ref string, patch OrderPatch, ifMatch *int64) (Order, error) {
	if err := checkPatchLimits(patch); err != nil {
		return Order{}, err
	}
	pre := s.prepareUpdate(ctx, project, ref, patch)
	var refused *placement.SpecRefusedError
	if pre.inline != nil && errors.As(pre.inline.err, &refused) {
		// The provider would refuse the new spec (an extension off its
		// allow list): the PATCH is refused and nothing changes, as a
		// schema error would be.
		return Order{}, refused
	}
	return s.change(ctx, project, ref, ifMatch, func(tx *store.Tx, o *Order, def statemachine.Definition) error {
		if o.DeletedAt != nil {
			return fmt.Errorf("%w: order %s", ErrOrderDeleting, o.ID)
		}
		o.wide = true
		if patch.DisplayName != nil {
			o.DisplayName = cmpOr(*patch.DisplayName, o.ID)
		}
		if patch.Labels != nil {
			merged := mergeLabels(o.Labels, patch.Labels)
			if err := mergedLabelsProblem(o.Labels, merged); err != nil {
				return err
			}
			o.Labels = merged
		}
		if patch.UserValues == nil && patch.Edits == nil {
			o.Version++
			return nil
		}
		tr, ok := def.Transfer(o.State, statemachine.TriggerOnUpdate)
		if !ok {
			return fmt.Errorf("%w: order %s is %s, which has no on_update transfer", ErrInvalidState, o.ID, o.State)
		}
		next, inline := pre.next, pre.inline
		if pre.version != o.Version || next == nil {
			// The order changed since it was read: build again, and let the
			// validation be queued.
			var err error
			if next, err = s.patchedAttributes(ctx, o, patch); err != nil {
				return err
			}
			inline = nil
		}
		if patch.UserValues != nil {
			o.UserValues = patch.UserValues
		}
		o.valueSets.Candidate = o.UserValues
		o.Attributes.Candidate = next
		o.validation = nil
		o.inline = inline
		return s.fireTx(ctx, tx, o, def, step{transfer: tr, trigger: statemachine.TriggerOnUpdate}, 0)
	})
}

// preparedUpdate is a PATCH's new attributes and the validation they lead
// to, worked out before the PATCH's transaction from the order as read at
// version.
type preparedUpdate struct {
	version int64
	next    map[string]any
	inline  *inlineValidation
}

// prepareUpdate builds a PATCH's attributes and, when the on_update
// transfer leads to a validating auto transfer (simple's update_start),
// runs that validation now: the answer then shows its outcome, and no job
// is needed. Whatever goes wrong here is found again, and answered, in the
// transaction.
func (s *Service) prepareUpdate(ctx context.Context, project, ref string, patch OrderPatch) preparedUpdate {
	if patch.UserValues == nil && patch.Edits == nil {
		return preparedUpdate{}
	}
	o, err := s.Order(ctx, project, ref)
	if err != nil || o.DeletedAt != nil {
		return preparedUpdate{}
	}
	def, err := s.definition(ctx, s.cfg.DB, o.Lifecycle)
	if err != nil {
		return preparedUpdate{}
	}
	tr, ok := def.Transfer(o.State, statemachine.TriggerOnUpdate)
	if !ok {
		return preparedUpdate{}
	}
	next, err := s.patchedAttributes(ctx, &o, patch)
	if err != nil {
		return preparedUpdate{}
	}
	pre := preparedUpdate{version: o.Version, next: next}
	if auto, ok := def.Transfer(tr.Target, statemachine.TriggerAuto); ok && auto.Validate {
		if st, _ := def.State(tr.Target); st.ValidateSelf != statemachine.SetActive {
			pre.inline = s.validateNow(ctx, &o, next)
		}
	}
	return pre
}

// patchedAttributes builds the attributes a PATCH asks for and checks them.
func (s *Service) patchedAttributes(ctx context.Context, o *Order, patch OrderPatch) (map[string]any, error) {
	// Built on the set as asked, not on what a policy made of it: the
	// policy chain runs afresh on the result.
	base := o.Attributes.Asked()
	if base == nil {
		base = o.Attributes.Candidate
	}
	next := deepCopyMap(base)
	var item catalog.Item // known when the PATCH sets user values
	if patch.UserValues != nil {
		var err error
		if item, err = s.cfg.Catalog.Item(ctx, o.CatalogItemID); err != nil {
			return nil, err
		}
		if next, err = s.cfg.Catalog.ApplyUserValues(ctx, item, next, patch.UserValues); err != nil {
			return nil, err
		}
	}
	var errs invalid.Errors
	for i, e := range patch.Edits {
		p, err := schema.ParsePath(e.Path)
		if err != nil {
			errs.Add(fmt.Sprintf("edits[%d].path", i), "%v", err)
			continue
		}
		var v any
		if len(e.Value) > 0 {
			if err := json.Unmarshal(e.Value, &v); err != nil {
				errs.Add(fmt.Sprintf("edits[%d].value", i), "must be a JSON value")
				continue
			}
		}
		if v == nil {
			err = p.Delete(next)
		} else {
			err = p.Set(next, v)
		}
		if err != nil {
			errs.Add(fmt.Sprintf("edits[%d].path", i), "%v", err)
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	_, sch, err := s.serviceType(ctx, o.ServiceType)
	if err != nil {
		return nil, err
	}
	if bad := sch.NotUpdatable(base, next); len(bad) > 0 {
		fields := make([]invalid.Field, 0, len(bad))
		for path, mod := range bad {
			fields = append(fields, invalid.Field{Field: path, Path: path, DisplayName: item.DisplayNameAt(path),
				Message: fmt.Sprintf("is %q: only rw+ attributes change after creation", mod)})
		}
		return nil, newAttributeNotUpdatable(fields)
	}
	field := "edits"
	if patch.UserValues != nil {
		field = "user_values"
	}
	if err := checkSpecSize(field, next); err != nil {
		return nil, err
	}
	if err := s.cfg.Catalog.ValidateSpec(ctx, o.ServiceType, next); err != nil {
		return nil, err
	}
	return next, nil
}

// SetStateParams is a `:setState` request.
type SetStateParams struct {
	TargetState    string `json:"target_state"`
	CurrentVersion *int64 `json:"current_version"`
}

// SetState takes the api transfer from the order's state to the target
// (LSM set_state). The caller's current_version must be the order's
// ([ErrVersionMismatch] otherwise: re-read and re-decide); no api transfer
// between the two states is [ErrNoTransfer]; once deleted, only a
// transfer to a purging or deleted state is allowed ([ErrOrderDeleting]).
// A validating transfer's validation runs in the request (queued as a job
// when the policy chain cannot run now): the answer shows its outcome.
func (s *Service) SetState(ctx context.Context, project, ref string, p SetStateParams) (Order, error) {
	var errs invalid.Errors
	if p.TargetState == "" {
		errs.Add("target_state", "is required")
	}
	if p.CurrentVersion == nil {
		errs.Add("current_version", "is required: the version you read")
	}
	if err := errs.Err(); err != nil {
		return Order{}, err
	}
	inline := s.prepareSetState(ctx, project, ref, p)
	return s.change(ctx, project, ref, nil, func(tx *store.Tx, o *Order, def statemachine.Definition) error {
		if *p.CurrentVersion != o.Version {
			return &VersionMismatchError{OrderID: o.ID, Current: o.Version, Given: *p.CurrentVersion}
		}
		tr, ok := def.APITransfer(o.State, p.TargetState)
		if !ok {
			return fmt.Errorf("%w: lifecycle %s has no api transfer from %s to %s", ErrNoTransfer, o.Lifecycle,
				o.State, p.TargetState)
		}
		if target, _ := def.State(tr.Target); o.DeletedAt != nil && !target.PurgeResources && !target.Deleted {
			return fmt.Errorf("%w: order %s", ErrOrderDeleting, o.ID)
		}
		if tr.Validate {
			if inline == nil {
				return s.queueValidationTx(ctx, tx, o, tr)
			}
			return s.fireTx(ctx, tx, o, def, validated(o, tr, statemachine.TriggerAPI, inline), 0)
		}
		return s.fireTx(ctx, tx, o, def, step{transfer: tr, trigger: statemachine.TriggerAPI}, 0)
	})
}

// prepareSetState runs the validation of a validating api transfer before
// its transaction, on the order as the caller read it (current_version);
// nil when there is none to run, or it must be queued.
func (s *Service) prepareSetState(ctx context.Context, project, ref string, p SetStateParams) *inlineValidation {
	o, err := s.Order(ctx, project, ref)
	if err != nil || o.Version != *p.CurrentVersion {
		return nil
	}
	def, err := s.definition(ctx, s.cfg.DB, o.Lifecycle)
	if err != nil {
		return nil
	}
	tr, ok := def.APITransfer(o.State, p.TargetState)
	if !ok || !tr.Validate {
		return nil
	}
	set := o.Attributes.Candidate
	if src, _ := def.State(o.State); src.ValidateSelf == statemachine.SetActive {
		set = o.Attributes.Asked()
	}
	return s.validateNow(ctx, &o, set)
}

func mergeLabels(cur map[string]string, patch map[string]*string) map[string]string {
	out := maps.Clone(cur)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range patch {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = *v
		}
	}
	return out
}

func deepCopyMap(m map[string]any) map[string]any {
	out, _ := schema.DeepCopy(m).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out
}
