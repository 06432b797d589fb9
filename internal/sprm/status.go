package sprm

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/events"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/limits"
	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// ApplyStatus applies a provider's status report to an instance: the one
// intake behind both the HTTP PUT and the NATS subscription. A report older
// than the last applied one returns ErrStaleReport and changes nothing; a
// report of DELETED also sets deleted_at, and one of DELETING or DELETED
// sets delete_time if no deletion was requested before.
func (s *Service) ApplyStatus(ctx context.Context, id string, r provider.StatusReport) (Instance, error) {
	return s.applyStatus(ctx, id, r, nil, ViaReport)
}

// ApplyStatusIfMatch is ApplyStatus with the HTTP PUT's If-Match
// precondition. ifMatch, when not nil, is the version the caller read: it
// is checked under the row lock in the transaction that applies the
// report, so another writer's change in between gives store.ErrStale and
// changes nothing. The precondition comes before the report's age: a
// report that would be stale as well is still a 412, not ErrStaleReport.
func (s *Service) ApplyStatusIfMatch(ctx context.Context, id string, r provider.StatusReport, ifMatch *int64) (Instance, error) {
	return s.applyStatus(ctx, id, r, ifMatch, ViaReport)
}

// applyStatus applies a status the provider gave, by a report or a
// resync (via).
func (s *Service) applyStatus(ctx context.Context, id string, r provider.StatusReport, ifMatch *int64, via string) (Instance, error) {
	var errs invalid.Errors
	if !r.Status.Valid() {
		errs.Add("status", "must be one of PENDING PROVISIONING RUNNING COMPLETED FAILED DELETING DELETED UNKNOWN")
	}
	if r.ObservedTime.IsZero() {
		errs.Add("observed_time", "is required")
	}
	if r.RestartCount != nil && *r.RestartCount < 0 {
		errs.Add("restart_count", "must not be negative")
	}
	// As the document bounds it: a report over NATS is held to it too.
	limits.CheckLength(&errs, "message", r.Message, limits.MaxMessage)
	checkOutputs(&errs, "outputs", r.Outputs)
	checkSync(&errs, "synced", r.Synced)
	if err := errs.Err(); err != nil {
		return Instance{}, err
	}
	observed := r.ObservedTime.UTC()
	if r.Synced != nil && r.Synced.ObservedTime.IsZero() {
		synced := *r.Synced
		synced.ObservedTime = observed
		r.Synced = &synced
	}
	for attempt := 0; ; attempt++ {
		t := s.now()
		n, in, err := s.applyStatusTx(ctx, ifMatch, InstanceStatus{InstanceID: id, Status: r.Status, Message: r.Message, RestartCount: r.RestartCount, Via: via},
			InstanceApplyStatusParams{Status: string(r.Status), StatusMessage: r.Message,
				ObservedTime: &observed, UpdateTime: t, RestartCount: r.RestartCount, DeletedAt: t, DeleteTime: t,
				StatusTime: &t, ResyncTime: s.resyncDue(r.Status, t), Outputs: outputsArg(r.Outputs),
				Synced: syncedArg(r.Synced), ID: id})
		if errors.Is(err, ErrInstanceNotFound) {
			return Instance{}, err
		}
		if err != nil {
			return Instance{}, fmt.Errorf("apply status to %s: %w", id, err)
		}
		if n == 1 {
			s.log.DebugContext(ctx, "status applied", "instance_id", id, "status", r.Status)
			return in, nil
		}
		// Nothing was updated: stale only if a newer report was applied. The
		// row may also have been inserted just after the update missed it;
		// then the update is tried again rather than the report dropped.
		if in.statusObservedTime != nil && in.statusObservedTime.After(observed) || attempt > 0 {
			return in, ErrStaleReport
		}
	}
}

// subscriber is what the status consumer needs from the event bus.
type subscriber interface {
	Subscribe(ctx context.Context, p events.SubscribeParams) (stop func(), err error)
}

// StatusSubjects is the NATS filter for every service type's status reports.
const StatusSubjects = "steward.status.>"

// ConsumeStatus subscribes to provider status CloudEvents on NATS. Every
// replica subscribes to the same durable consumer, so each event is handled
// once. Call the returned stop at shutdown.
func (s *Service) ConsumeStatus(ctx context.Context, bus subscriber) (stop func(), err error) {
	return bus.Subscribe(ctx, events.SubscribeParams{
		Subject: StatusSubjects, Durable: "sprm-status", Handler: s.handleStatusEvent,
	})
}

// handleStatusEvent applies one status event. A report for an instance
// Steward does not know (yet) is retried until UnknownReportTTL rather than
// dropped (DCM's control-plane#44 lost such reports for good).
func (s *Service) handleStatusEvent(ctx context.Context, ev events.Event) error {
	var r provider.StatusReport
	if err := ev.DataAs(&r); err != nil || r.InstanceID == "" {
		s.log.WarnContext(ctx, "dropping a status event without a readable report", "event_id", ev.ID(), "error", err)
		return nil
	}
	_, err := s.ApplyStatus(ctx, r.InstanceID, r)
	var bad *invalid.Error
	switch {
	case err == nil, errors.Is(err, ErrStaleReport):
		return nil
	case errors.As(err, &bad):
		s.log.WarnContext(ctx, "dropping an invalid status report", "event_id", ev.ID(), "instance_id", r.InstanceID, "error", err)
		return nil
	case errors.Is(err, ErrInstanceNotFound) && s.now().Sub(ev.Time()) > s.cfg.UnknownReportTTL:
		s.log.WarnContext(ctx, "dropping a status report for an instance that never appeared", "event_id", ev.ID(),
			"instance_id", r.InstanceID, "age", s.now().Sub(ev.Time()))
		return nil
	}
	return err // retried: unknown instance (for now) or a store failure
}

// applyStatusTx applies a provider's status to an instance in a
// transaction of its own, records the change for its order, and returns the
// rows changed (0: the instance is missing, or holds a newer report) and
// the instance as it now is. The update returns the instance itself, so a
// report costs no read after it; only a report not applied reads it.
func (s *Service) applyStatusTx(ctx context.Context, ifMatch *int64, st InstanceStatus, arg InstanceApplyStatusParams) (int64, Instance, error) {
	var n int64
	var in Instance
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := s.checkVersionTx(ctx, tx, st.InstanceID, ifMatch); err != nil {
			return err
		}
		rows, err := s.q.InstanceApplyStatus(ctx, tx, arg)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			in, err = instanceFromRow(s.q.InstanceGet(ctx, tx, st.InstanceID, ""))
			return err
		}
		r := rows[0]
		n = 1
		if in, err = instanceFromRow(InstanceGetRow{ID: r.ID, Project: r.Project, Name: r.Name, ProviderName: r.ProviderName,
			ServiceType: r.ServiceType, Spec: r.Spec, Status: r.Status, StatusMessage: r.StatusMessage,
			StatusObservedTime: r.StatusObservedTime, Version: r.Version, CreateTime: r.CreateTime, UpdateTime: r.UpdateTime,
			DeletedAt: r.DeletedAt, CleanupTaskID: r.CleanupTaskID, CleanupTaskStatus: r.CleanupTaskStatus,
			RestartCount: r.RestartCount, DeleteTime: r.DeleteTime, Outputs: r.Outputs, Synced: r.Synced}, nil); err != nil {
			return err
		}
		return s.recordChangeTx(ctx, tx, r.OrderID, reconcile.KindStatus, st)
	})
	return n, in, err
}
