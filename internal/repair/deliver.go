package repair

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// deliverArgs is the job that hands an operation to its provider.
type deliverArgs struct {
	OperationID string `json:"operation_id"`
}

// Kind implements river.JobArgs.
func (deliverArgs) Kind() string { return "repair_deliver" }

type deliverWorker struct {
	river.WorkerDefaults[deliverArgs]
	s *Service
}

// RegisterWorkers adds the delivery worker to the jobs registry.
func (s *Service) RegisterWorkers(w *river.Workers) {
	river.AddWorker(w, &deliverWorker{s: s})
}

func (w *deliverWorker) Work(ctx context.Context, job *river.Job[deliverArgs]) error {
	return w.s.deliver(ctx, job.Args.OperationID, job.Attempt >= job.MaxAttempts)
}

func (w *deliverWorker) NextRetry(job *river.Job[deliverArgs]) time.Time {
	if w.s.cfg.Backoff == nil {
		return time.Time{} // River's default
	}
	return time.Now().Add(w.s.cfg.Backoff(job.Attempt))
}

// deliver hands the operation to the provider that owns its app instance,
// with a fresh worker token. The provider's Repair is idempotent by
// operation id, so a delivery repeated after a crash starts nothing twice.
// A refusal (4xx) fails the operation with PROVIDER_REFUSED; a transient
// failure is retried by River until the last attempt, which fails it with
// DELIVERY_FAILED. The operation never stays pending for ever.
func (s *Service) deliver(ctx context.Context, id string, last bool) error {
	op, err := s.operationQ(ctx, s.cfg.DB, id)
	if errors.Is(err, ErrOperationNotFound) {
		s.log.WarnContext(ctx, "delivery job for an unknown repair operation; dropped", "repair_operation_id", id)
		return nil
	}
	if err != nil {
		return err
	}
	if op.Done() || op.DeliverTime != nil {
		return nil
	}
	prov, err := s.cfg.Providers.RegisteredProvider(ctx, op.ProviderName)
	if err != nil {
		return s.failDelivery(ctx, op, last, "PROVIDER_NOT_FOUND", err)
	}
	if !slices.Contains(prov.Operations, provider.OperationRepair) {
		return s.finishFailed(ctx, op, "REPAIR_NOT_SUPPORTED",
			fmt.Sprintf("provider %s no longer registers the repair operation", op.ProviderName))
	}
	token, err := s.cfg.Tokens.IssueWorkerToken(ctx, op.ID, s.cfg.WorkerTokenTTL)
	if err != nil {
		return fmt.Errorf("issue the worker token of repair operation %s: %w", op.ID, err)
	}
	rt, err := s.runtime(ctx, s.cfg.DB, op.AppInstanceID)
	if err != nil {
		return err
	}
	req := provider.RepairRequest{
		InstanceID: op.InstanceID, OperationID: op.ID, AppInstanceID: op.AppInstanceID, Project: op.Project,
		ServiceType: op.ServiceType, Action: op.Action, Scope: op.Scope, TargetMemberID: op.TargetMemberID,
		ComponentKey: op.ComponentKey, ReportPath: reportPath(op), Token: token,
	}
	if rt != nil {
		req.ObservedState = &rt.RuntimeState
	}
	_, err = s.cfg.Client.Repair(provider.WithCallToken(ctx, prov.CallToken), prov.Endpoint, req)
	var re *provider.ResponseError
	switch {
	case err == nil:
		return s.markDelivered(ctx, op.ID)
	case errors.Is(err, provider.ErrNotFound):
		return s.finishFailed(ctx, op, "INSTANCE_NOT_FOUND",
			fmt.Sprintf("provider %s does not hold instance %s", op.ProviderName, op.InstanceID))
	case errors.As(err, &re) && re.StatusCode >= 400 && re.StatusCode < 500 &&
		re.StatusCode != http.StatusConflict && re.StatusCode != http.StatusTooManyRequests:
		return s.finishFailed(ctx, op, "PROVIDER_REFUSED", err.Error())
	}
	return s.failDelivery(ctx, op, last, "DELIVERY_FAILED", err)
}

// failDelivery retries a transient failure, or fails the operation at the
// last attempt.
func (s *Service) failDelivery(ctx context.Context, op Operation, last bool, code string, err error) error {
	if !last {
		return fmt.Errorf("deliver repair operation %s to %s: %w", op.ID, op.ProviderName, err)
	}
	s.log.WarnContext(ctx, "repair operation could not be delivered", "repair_operation_id", op.ID,
		"provider", op.ProviderName, "error", err)
	return s.finishFailed(ctx, op, code, err.Error())
}

// markDelivered records that the provider accepted the operation.
func (s *Service) markDelivered(ctx context.Context, id string) error {
	return s.modify(ctx, id, func(op *Operation) bool {
		if op.Done() || op.DeliverTime != nil {
			return false
		}
		t := s.now()
		op.DeliverTime = &t
		return true
	})
}

// finishFailed fails an unfinished operation with a deterministic code:
// the steps not finished are skipped, and the app instance is left alone.
func (s *Service) finishFailed(ctx context.Context, op Operation, code, message string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return s.modify(ctx, op.ID, func(op *Operation) bool {
		if op.Done() {
			return false
		}
		t := s.now()
		for i := range op.Steps {
			if stepRank(op.Steps[i].Status) < 2 {
				op.Steps[i].Status, op.Steps[i].Message, op.Steps[i].FinishedAt = provider.RepairSkipped, code, &t
			}
		}
		op.Status = provider.RepairFailed
		op.Error = &provider.RepairError{Code: code, Message: message}
		op.NextSafeAction = NextRetry
		s.log.WarnContext(ctx, "repair operation failed", "repair_operation_id", op.ID, "code", code, "message", message)
		return true
	})
}

// modify applies change to the operation in a transaction, retried when
// another writer got there first; change returns false to write nothing.
func (s *Service) modify(ctx context.Context, id string, change func(op *Operation) bool) error {
	for range 5 {
		err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
			op, err := s.operationQ(ctx, tx, id)
			if err != nil || !change(&op) {
				return err
			}
			_, err = s.update(ctx, tx, op)
			return err
		})
		if !errors.Is(err, store.ErrStale) {
			return err
		}
	}
	return fmt.Errorf("update repair operation %s: %w", id, store.ErrStale)
}

// reportPath is where the worker reports on op.
func reportPath(op Operation) string {
	return "/api/v1/" + operationPath(op) + "/report"
}

// operationPath is op's path below /api/v1.
func operationPath(op Operation) string {
	return "projects/" + url.PathEscape(op.Project) + "/app-instances/" + url.PathEscape(op.AppInstanceID) +
		"/repair-operations/" + op.ID
}

// SweepSilent fails the unfinished operations whose worker has not
// reported for SilenceTimeout (REPAIR_TIMED_OUT), so that a worker that
// died cannot hold its app instance's one repair slot for ever.
func (s *Service) SweepSilent(ctx context.Context) (int, error) {
	ids, err := s.q.RepairStale(ctx, s.cfg.DB, s.now().Add(-s.cfg.SilenceTimeout))
	if err != nil {
		return 0, fmt.Errorf("find silent repair operations: %w", err)
	}
	for _, id := range ids {
		msg := fmt.Sprintf("no report from the worker for %s", s.cfg.SilenceTimeout)
		if err := s.finishFailed(ctx, Operation{ID: id}, "REPAIR_TIMED_OUT", msg); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}
