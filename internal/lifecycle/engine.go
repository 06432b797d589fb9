package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/policy"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// maxChain bounds the transfers one trigger may cause in one transaction
// (auto transfers that lead to auto transfers): a definition whose autos
// loop is caught here rather than spinning.
const maxChain = 32

// Trigger values of events that are not transfers.
const (
	eventCreate = "create"
	eventDelete = "delete"
)

// step is one transfer the engine takes.
type step struct {
	transfer statemachine.Transfer
	trigger  statemachine.Trigger
	// failed takes the error edge (failed validation or deployment).
	failed bool
	// reason says why it failed; kept on the order and in the event.
	reason string
}

// fireTx takes a transfer of o (loaded, or new, in tx) and then enters the
// new state, which may take more transfers; o is changed in memory and the
// caller saves it. A self-transfer with no operation changes nothing: it
// bumps no version and does no work (LSM).
func (s *Service) fireTx(ctx context.Context, tx *store.Tx, o *Order, def statemachine.Definition, st step,
	depth int) error {
	if depth > maxChain {
		return fmt.Errorf("order %s: more than %d transfers in a row from %s: the lifecycle %s loops", o.ID, maxChain,
			o.State, o.Lifecycle)
	}
	target, op := st.transfer.Target, st.transfer.TargetOperation
	if st.failed {
		target, op = st.transfer.Error, st.transfer.ErrorOperation
		if target == "" {
			target = st.transfer.Source
		}
	}
	if target == o.State && op == "" {
		if st.failed {
			o.LastError = st.reason
		}
		return nil
	}
	sets, err := statemachine.ApplyOperation(op, o.Attributes)
	if err != nil {
		// The definition was checked when stored; what is left is an
		// order whose sets say otherwise. Refuse the transfer, say why.
		return fmt.Errorf("%w: %s -> %s: %v", ErrTransferNotApplicable, o.State, target, err)
	}
	next, ok := def.State(target)
	if !ok {
		return fmt.Errorf("lifecycle %s has no state %q", o.Lifecycle, target)
	}
	from := o.State
	if next.Deleted && !o.Terminal {
		if err := s.removedTx(ctx, tx, o); err != nil {
			return err
		}
	}
	if (op == statemachine.OpPromote || op == statemachine.OpRollback) && o.Attributes.Active != nil {
		// The realised spec changes: adapters act on it again, and Ready
		// waits for their reports at the new generation.
		o.Generation++
	}
	o.Attributes, o.State, o.Terminal = sets, target, next.Deleted
	if op != "" {
		o.wide = true
		o.valueSets = o.valueSets.after(op)
		o.UserValues = o.valueSets.shown(o.Attributes)
	}
	o.Version++
	o.LastError = ""
	if st.failed {
		o.LastError = st.reason
	}
	if op == statemachine.OpRollback || op == statemachine.OpClearCandidate {
		o.validation = nil // it was of the candidate set, which is gone
	}
	recordEvent(o, Event{Version: o.Version, Time: s.now(), Trigger: string(st.trigger),
		From: from, To: target, Operation: string(op), Error: o.LastError})
	s.log.InfoContext(ctx, "order transfer", "order_id", o.ID, "from", from, "to", target, "trigger", st.trigger,
		"operation", op, "version", o.Version, "error", o.LastError)
	// A resource transfer without an operation was decided by the
	// resource's status for the active set it realises: entering the next
	// state has nothing to realise and no outcome to read again.
	realised := st.trigger == statemachine.TriggerResource && op == ""
	return s.enter(ctx, tx, o, def, next, depth+1, realised)
}

// enterTx does what entering state st asks (DESIGN §3), in tx: a pending
// delete takes the state's on_delete transfer; an exporting state makes
// sure a resource realises the active set; a purging state deletes the
// resource; an auto transfer fires now, or, when it validates, is queued
// as a job (the policy chain runs outside the transaction). Everything is
// written in tx, so a crash loses none of it.
func (s *Service) enterTx(ctx context.Context, tx *store.Tx, o *Order, def statemachine.Definition,
	st statemachine.State, depth int) error {
	return s.enter(ctx, tx, o, def, st, depth, false)
}

// enter is enterTx; realised says the active set is known to be realised
// by the current resource, whose status was just read.
func (s *Service) enter(ctx context.Context, tx *store.Tx, o *Order, def statemachine.Definition,
	st statemachine.State, depth int, realised bool) error {
	if o.DeletedAt != nil {
		if tr, ok := def.Transfer(st.Name, statemachine.TriggerOnDelete); ok {
			return s.fireTx(ctx, tx, o, def, step{transfer: tr, trigger: statemachine.TriggerOnDelete}, depth)
		}
	}
	if st.ExportResources && !(realised && o.PendingInstanceID == "") {
		started, err := s.realiseTx(ctx, tx, o)
		if err != nil {
			return err
		}
		// Realised already (a rollback to the set the resource runs, a
		// retry): the resource's status now is the deployment's outcome.
		if !started && o.PendingInstanceID == "" && o.InstanceID != "" {
			if err := s.resourceOutcomeTx(ctx, tx, o, depth); err != nil {
				return err
			}
			if o.State != st.Name {
				return nil // the outcome moved the order on
			}
		}
	}
	if st.PurgeResources {
		gone, err := s.purgeTx(ctx, tx, o)
		if err != nil {
			return err
		}
		if gone {
			return s.finishDeletionTx(ctx, tx, o, def, st, depth)
		}
	}
	tr, ok := def.Transfer(st.Name, statemachine.TriggerAuto)
	if !ok {
		return nil
	}
	if tr.Validate {
		if v := o.inline; v != nil {
			o.inline = nil
			return s.fireTx(ctx, tx, o, def, validated(o, tr, statemachine.TriggerAuto, v), depth)
		}
		return s.queueValidationTx(ctx, tx, o, tr)
	}
	return s.fireTx(ctx, tx, o, def, step{transfer: tr, trigger: statemachine.TriggerAuto}, depth)
}

// validated turns a validation's outcome into the step it decides, keeping
// what the policy chain made of the set for its realisation.
func validated(o *Order, tr statemachine.Transfer, trigger statemachine.Trigger, v *inlineValidation) step {
	st := step{transfer: tr, trigger: trigger}
	if v.err != nil {
		st.failed, st.reason = true, "validation failed: "+v.err.Error()
		return st
	}
	placed := v.placed
	o.validation, o.wide = &placed, true
	return st
}

// validateNow runs the policy chain on set in the request, for the next
// validating transfer. A failure that is not the set's fault (the chain
// could not run) returns nil: the transfer's validation is queued instead.
func (s *Service) validateNow(ctx context.Context, o *Order, set map[string]any) *inlineValidation {
	placed, err := s.cfg.Placement.Place(ctx, placement.PlaceParams{Spec: set, Labels: o.Labels, Project: o.Project,
		CheckWithProvider: true})
	if err != nil && !validationFailure(err) {
		s.log.WarnContext(ctx, "validation deferred to a job", "order_id", o.ID, "error", err)
		return nil
	}
	return &inlineValidation{placed: placed, err: err}
}

// realiseTx makes sure the order's resource realises its active set: a
// first resource is placed and recorded (its provisioning queued in tx); a
// resource whose intent differs from the active set is updated (in place
// or by replacement, placement decides). The placement the last
// validation made of the set is used when there is one; otherwise the
// policy chain runs now.
func (s *Service) realiseTx(ctx context.Context, tx *store.Tx, o *Order) (started bool, err error) {
	if o.Attributes.Active == nil {
		return false, nil // nothing to realise
	}
	// The resource's intent is the set as asked; the active set becomes
	// what the policy chain made of it, which is what the provider runs.
	intent := o.Attributes.Asked()
	if o.InstanceID != "" {
		cur, err := s.cfg.Placement.ResourceTx(ctx, tx, o.InstanceID)
		if err != nil && !errors.Is(err, placement.ErrResourceNotFound) {
			return false, err
		}
		if err == nil && cur.DeletedAt == nil && reflect.DeepEqual(normalize(cur.OriginalRequest), normalize(intent)) {
			o.showRunning(intent, cur.ValidatedRequest)
			return false, nil // realised already
		}
	}
	placed, err := s.placementFor(ctx, o, intent)
	if err != nil {
		// The set cannot be placed now (a policy refuses it, no provider):
		// the order stays, saying why; a later transfer may fix it.
		o.LastError = "realise: " + err.Error()
		s.log.WarnContext(ctx, "order cannot be realised", "order_id", o.ID, "error", err)
		return false, nil
	}
	o.validation, o.wide = nil, true
	o.showRunning(intent, placed.Spec)
	if o.InstanceID == "" {
		id := store.NewID()
		if err := s.cfg.Placement.RecordTx(ctx, tx, placement.RecordParams{
			InstanceID: id, OrderID: o.ID, Project: o.Project, Labels: o.Labels, OriginalRequest: intent,
			Placement: placed,
		}); err != nil {
			return false, err
		}
		o.InstanceID, o.ProviderName, o.Status, o.StatusMessage = id, placed.ProviderName, provider.StatusPending, ""
		o.RestartCount = nil
		return true, nil
	}
	res, err := s.cfg.Placement.UpdateTx(ctx, tx, placement.UpdateParams{
		OrderID: o.ID, InstanceID: o.InstanceID, NewInstanceID: store.NewID(), OriginalRequest: intent,
		Placement: placed,
	})
	if err != nil {
		return false, err
	}
	o.PendingInstanceID = o.InstanceID
	if res.Replacement {
		o.PendingInstanceID = res.NewInstanceID
	}
	return true, nil
}

// showRunning makes the active set spec, what the policy chain made of
// asked (the set as asked, kept as Requested): the order shows what its
// provider runs.
func (o *Order) showRunning(asked, spec map[string]any) {
	if spec == nil {
		return
	}
	if o.Attributes.Requested == nil {
		o.Attributes.Requested = asked
	}
	if !reflect.DeepEqual(normalize(o.Attributes.Active), normalize(spec)) {
		o.Attributes.Active, o.wide = spec, true
	}
}

// placementFor returns the placement of intent: the last validation's
// when it was of this set, else the policy chain's now.
func (s *Service) placementFor(ctx context.Context, o *Order, intent map[string]any) (placement.Placement, error) {
	if o.validation != nil {
		return *o.validation, nil
	}
	return s.cfg.Placement.Place(ctx, placement.PlaceParams{Spec: intent, Labels: o.Labels, Project: o.Project})
}

// purgeTx deletes the order's resource (and a replacement in flight). It
// reports gone when there is nothing left to wait for.
func (s *Service) purgeTx(ctx context.Context, tx *store.Tx, o *Order) (gone bool, err error) {
	if o.InstanceID == "" {
		return true, nil
	}
	err = s.cfg.Placement.DeleteTx(ctx, tx, o.InstanceID)
	if errors.Is(err, placement.ErrResourceNotFound) {
		return o.Status == provider.StatusDeleted || o.Status == provider.StatusPending, nil
	}
	return false, err
}

// outcome reads a resource status as a deployment outcome for a state:
// in a purging state DELETED is success and FAILED failure; elsewhere
// RUNNING and COMPLETED (a workload that ran to its end and succeeded) are
// success, FAILED and DELETED failure. ok is false for the statuses on the
// way (PENDING, PROVISIONING, DELETING, UNKNOWN).
func outcome(st statemachine.State, status provider.Status) (failed, ok bool) {
	if st.PurgeResources {
		switch status {
		case provider.StatusDeleted:
			return false, true
		case provider.StatusFailed:
			return true, true
		}
		return false, false
	}
	switch status {
	case provider.StatusRunning, provider.StatusCompleted:
		return false, true
	case provider.StatusFailed, provider.StatusDeleted:
		return true, true
	}
	return false, false
}

// validateArgs is the job that validates an order's attribute set for a
// validating transfer and takes its success or error edge. Version pins
// the order's state: a job for an order that moved on does nothing.
type validateArgs struct {
	OrderID string               `json:"order_id"`
	Version int64                `json:"version"`
	Trigger statemachine.Trigger `json:"trigger"`
	Target  string               `json:"target"`
}

func (validateArgs) Kind() string { return "lifecycle.validate" }

// queueValidationTx queues the validation of a validating transfer of o,
// at o's version, in tx.
func (s *Service) queueValidationTx(ctx context.Context, tx *store.Tx, o *Order, tr statemachine.Transfer) error {
	return s.cfg.Jobs.InsertTx(ctx, tx, validateArgs{OrderID: o.ID, Version: o.Version, Trigger: tr.Trigger,
		Target: tr.Target}, &river.InsertOpts{MaxAttempts: 10})
}

type validateWorker struct {
	river.WorkerDefaults[validateArgs]
	s *Service
}

func (w *validateWorker) Work(ctx context.Context, job *river.Job[validateArgs]) error {
	return w.s.validate(ctx, job.Args)
}

func (w *validateWorker) NextRetry(job *river.Job[validateArgs]) time.Time {
	return time.Now().Add(min(time.Duration(job.Attempt)*time.Second, 30*time.Second))
}

// validate runs the policy chain on the attribute set the transfer's
// source state validates (the candidate set unless it says active), then
// takes the success edge, keeping what the chain made of the set for its
// realisation, or the error edge with the reason. A policy refusal, a
// conflict, a spec the chain broke or no provider are validation failures;
// anything else is retried.
func (s *Service) validate(ctx context.Context, a validateArgs) error {
	o, err := s.orderByID(ctx, a.OrderID)
	if errors.Is(err, ErrOrderNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.Version != a.Version {
		return nil // moved on: a newer transfer decides
	}
	def, err := s.definition(ctx, s.cfg.DB, o.Lifecycle)
	if err != nil {
		return err
	}
	tr, ok := transferFor(def, o.State, a.Trigger, a.Target)
	if !ok {
		return nil
	}
	src, _ := def.State(o.State)
	set := o.Attributes.Candidate
	if src.ValidateSelf == statemachine.SetActive {
		set = o.Attributes.Asked()
	}
	placed, verr := s.cfg.Placement.Place(ctx, placement.PlaceParams{Spec: set, Labels: o.Labels, Project: o.Project,
		CheckWithProvider: true})
	if verr != nil && !validationFailure(verr) {
		return fmt.Errorf("validate order %s: %w", o.ID, verr)
	}
	return s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		o, err := s.lockOrderTx(ctx, tx, a.OrderID)
		if err != nil || o.Version != a.Version {
			return err
		}
		st := validated(&o, tr, a.Trigger, &inlineValidation{placed: placed, err: verr})
		if err := s.fireTx(ctx, tx, &o, def, st, 0); err != nil {
			return err
		}
		return s.saveOrderTx(ctx, tx, &o, a.Version)
	})
}

// transferFor finds the transfer a validation job was queued for.
func transferFor(def statemachine.Definition, source string, trigger statemachine.Trigger,
	target string) (statemachine.Transfer, bool) {
	if trigger == statemachine.TriggerAPI {
		return def.APITransfer(source, target)
	}
	tr, ok := def.Transfer(source, trigger)
	return tr, ok && tr.Target == target
}

// validationFailure reports whether a Place error is the set's fault (a
// failed validation) rather than a passing one (retried).
func validationFailure(err error) bool {
	var rejected *policy.RejectedError
	var conflict *policy.ConflictError
	var broken *placement.SpecBrokenError
	var refused *placement.SpecRefusedError
	return errors.As(err, &rejected) || errors.As(err, &conflict) || errors.As(err, &broken) ||
		errors.As(err, &refused) || errors.Is(err, policy.ErrNoProvider)
}

// normalize returns v as encoding/json would decode it, so values built
// in Go and values read back compare equal.
func normalize(v map[string]any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}
