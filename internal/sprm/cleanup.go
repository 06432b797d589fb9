package sprm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/audit"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// CleanupResult counts what one cleanup pass did.
type CleanupResult struct {
	Done, Retried, Failed, Skipped, Swept int
}

// RunCleanup is the cleanup worker's pass (rehydration seed, "Cleanup
// Mechanism"). It first sweeps intents whose request died into the queue,
// then claims pending tasks in batches until none are left: provider
// unknown or unavailable → skip until the next pass; DELETE on the provider
// succeeded or answered 404 → the task is removed and the instance DELETED;
// failed → retry_count+1, and FAILED past CleanupMaxRetries, which needs
// RetryCleanupTask. Claims make it safe with several workers. A task
// skipped in a pass is not claimed again in the same pass.
func (s *Service) RunCleanup(ctx context.Context) (CleanupResult, error) {
	var res CleanupResult
	swept, err := s.sweepStalePending(ctx)
	res.Swept = swept
	if err != nil {
		return res, err
	}
	var skipped []CleanupTask
	defer func() { s.releaseAll(ctx, skipped) }()
	for ctx.Err() == nil {
		tasks, err := s.claim(ctx)
		if err != nil {
			return res, err
		}
		skipped = append(skipped, s.runTasks(ctx, tasks, &res)...)
		if len(tasks) < s.cfg.CleanupBatch {
			break
		}
	}
	return res, ctx.Err()
}

// claim takes up to CleanupBatch tasks. It runs in a transaction: the
// UPDATE … RETURNING writes, so on SQLite it needs the write connection.
func (s *Service) claim(ctx context.Context) ([]CleanupTask, error) {
	var tasks []CleanupTask
	t := s.now()
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		until := t.Add(s.cfg.ClaimTimeout)
		rows, err := s.q.CleanupTaskClaim(ctx, tx, CleanupTaskClaimParams{ClaimedUntil: &until, UpdateTime: t,
			ClaimedBy: s.cfg.ProcessID, Now: t, Limit: int64(s.cfg.CleanupBatch)})
		tasks, err = fromRows(rows, err, taskFromRow[CleanupTaskClaimRow])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim cleanup tasks: %w", err)
	}
	return tasks, nil
}

// runTasks attempts the claimed tasks, CleanupConcurrency at a time, and
// returns the ones skipped (kept claimed until the pass ends).
func (s *Service) runTasks(ctx context.Context, tasks []CleanupTask, res *CleanupResult) []CleanupTask {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		skipped []CleanupTask
	)
	providers := map[string]*Provider{}
	sem := make(chan struct{}, s.cfg.CleanupConcurrency)
	for _, task := range tasks {
		prov, ok := providers[task.ProviderName]
		if !ok {
			p, err := s.Provider(ctx, task.ProviderName)
			if err == nil {
				prov = &p
			} else if !errors.Is(err, ErrProviderNotFound) {
				s.log.WarnContext(ctx, "look up provider for cleanup", "provider", task.ProviderName, "error", err)
			}
			providers[task.ProviderName] = prov
		}
		if prov == nil || prov.Status == HealthUnavailable {
			s.metrics.cleanups.WithLabelValues("skipped").Inc()
			res.Skipped++
			skipped = append(skipped, task)
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			outcome := s.runTask(ctx, *prov, task)
			mu.Lock()
			defer mu.Unlock()
			switch outcome {
			case "done":
				res.Done++
			case "failed":
				res.Failed++
			default:
				res.Retried++
			}
		}()
	}
	wg.Wait()
	return skipped
}

// runTask deletes one instance on its provider and records the outcome.
func (s *Service) runTask(ctx context.Context, prov Provider, task CleanupTask) string {
	_, err := s.cfg.Providers.Delete(prov.calling(ctx), prov.Endpoint, task.InstanceID)
	t := s.now()
	if err == nil || errors.Is(err, provider.ErrNotFound) {
		err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
			if _, err := s.q.CleanupTaskDelete(ctx, tx, task.ID); err != nil {
				return err
			}
			deleted := InstanceMarkDeletedParams{DeletedAt: t, DeleteTime: t, UpdateTime: t, ID: task.InstanceID}
			if _, err := s.setStatusTx(ctx, tx, InstanceStatus{InstanceID: task.InstanceID, Status: provider.StatusDeleted},
				func(tx *store.Tx) ([]string, error) { return s.q.InstanceMarkDeleted(ctx, tx, deleted) }); err != nil {
				return err
			}
			if err := audit.WriteTx(ctx, tx, cleanupRecord(task, prov, audit.OutcomeSuccess, t, nil)); err != nil {
				return err
			}
			if s.cleanups == nil || task.OrderID == "" {
				return nil
			}
			return s.cleanups.CleanupDoneTx(ctx, tx, task)
		})
		if err != nil {
			s.log.ErrorContext(ctx, "record finished cleanup; it will run again", "task_id", task.ID, "error", err)
			return "retry"
		}
		s.metrics.cleanups.WithLabelValues("done").Inc()
		s.log.InfoContext(ctx, "cleanup done", "task_id", task.ID, "instance_id", task.InstanceID, "provider", prov.Name,
			"attempts", task.RetryCount+1)
		return "done"
	}
	retries, status := task.RetryCount+1, TaskPending
	if retries >= s.cfg.CleanupMaxRetries {
		status = TaskFailed
	}
	rerr := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		if _, err := s.q.CleanupTaskRecordFailure(ctx, tx, CleanupTaskRecordFailureParams{RetryCount: int64(retries),
			Status: status, LastAttempt: &t, LastError: err.Error(), UpdateTime: t, ID: task.ID}); err != nil || status != TaskFailed {
			return err
		}
		return audit.WriteTx(ctx, tx, cleanupRecord(task, prov, audit.OutcomeError, t,
			map[string]any{"retries": retries, "error": err.Error()}))
	})
	if rerr != nil {
		s.log.ErrorContext(ctx, "record cleanup failure", "task_id", task.ID, "error", rerr)
	}
	if status == TaskFailed {
		s.metrics.cleanups.WithLabelValues("failed").Inc()
		s.log.ErrorContext(ctx, "cleanup FAILED after max retries; needs manual intervention (POST /api/v1/cleanup-tasks/{id}:retry)",
			"task_id", task.ID, "instance_id", task.InstanceID, "provider", prov.Name, "retries", retries, "error", err)
		return "failed"
	}
	s.metrics.cleanups.WithLabelValues("retry").Inc()
	s.log.WarnContext(ctx, "cleanup attempt failed; will retry", "task_id", task.ID, "instance_id", task.InstanceID,
		"provider", prov.Name, "retries", retries, "error", err)
	return "retry"
}

// releaseAll hands skipped tasks back untried, for the next pass.
func (s *Service) releaseAll(ctx context.Context, tasks []CleanupTask) {
	ctx = context.WithoutCancel(ctx)
	for _, task := range tasks {
		if _, err := s.q.CleanupTaskRelease(ctx, s.cfg.DB, s.now(), task.ID); err != nil {
			s.log.WarnContext(ctx, "release skipped cleanup task; its claim will expire", "task_id", task.ID, "error", err)
		}
	}
}

// sweepStalePending queues for cleanup the intents whose create request died
// before recording its outcome (the process crashed, or the outcome and the
// fallback both failed to write): "reconcile leftovers on start".
func (s *Service) sweepStalePending(ctx context.Context) (int, error) {
	list, err := s.q.InstanceListStalePending(ctx, s.cfg.DB, s.now().Add(-s.cfg.PendingGrace), int64(s.cfg.CleanupBatch))
	if err != nil {
		return 0, fmt.Errorf("list stale intents: %w", err)
	}
	for _, st := range list {
		// A failure is logged; the next sweep finds the intent again.
		_ = s.queueUnknown(ctx, st.ID, st.ProviderName, st.ServiceType, errors.New("create request ended without an outcome"))
	}
	return len(list), nil
}

// ReapTx puts back to PENDING the cleanup tasks that dead processes had
// claimed, in the reaping transaction (a peers.Reaper).
func (s *Service) ReapTx(ctx context.Context, tx *store.Tx, dead []string) error {
	if _, err := s.q.CleanupTaskReleaseOfDead(ctx, tx, dead); err != nil {
		return fmt.Errorf("release the cleanup tasks of %v: %w", dead, err)
	}
	return nil
}

// CleanupRecorder hears of each cleanup task of an order's instance that
// finished (the instance is gone from its provider), in the transaction
// that removes the task: the lifecycle logs it on the order.
type CleanupRecorder interface {
	// CleanupDoneTx records that task is done, in tx; an error rolls the
	// task's end back, to be run again.
	CleanupDoneTx(ctx context.Context, tx *store.Tx, task CleanupTask) error
}

// RecordCleanupsWith registers what hears of the finished cleanup tasks of
// orders' instances; until then, none does. Call it once, before the
// cleanup worker runs.
func (s *Service) RecordCleanupsWith(r CleanupRecorder) { s.cleanups = r }

// maxOrderCleanups bounds what OrderCleanupTasks reads of one order: an
// order has one instance at a time, so more than a handful pending means
// a provider that refuses deletes, and the first of them say so.
const maxOrderCleanups = 20

// OrderCleanupTasks returns the cleanup tasks of the instances made for an
// order that are not done yet (at most 20), oldest first; none when
// nothing of it is being removed.
func (s *Service) OrderCleanupTasks(ctx context.Context, orderID string) ([]CleanupTask, error) {
	rows, err := s.q.CleanupTaskListByOrder(ctx, s.cfg.DB, orderID, maxOrderCleanups)
	return fromRows(rows, err, taskFromRow[CleanupTaskListByOrderRow])
}

// CleanupTask returns one task.
func (s *Service) CleanupTask(ctx context.Context, id string) (CleanupTask, error) {
	return taskFromRow(s.q.CleanupTaskGet(ctx, s.cfg.DB, id))
}

// ListCleanupTasksParams filters and pages cleanup tasks.
type ListCleanupTasksParams struct {
	Status       string
	ProviderName string
	Page         store.PageRequest
}

// CleanupTasks lists the queue, oldest first.
func (s *Service) CleanupTasks(ctx context.Context, p ListCleanupTasksParams) (store.Page[CleanupTask], error) {
	page, err := store.ListPage(ctx, s.cfg.DB, s.q.cleanupTaskList, p.Page, scanTask,
		func(t CleanupTask) store.Cursor { return store.Cursor{Time: t.CreateTime, ID: t.ID} },
		p.Status, p.Status, p.ProviderName, p.ProviderName)
	if err != nil {
		return page, fmt.Errorf("list cleanup tasks: %w", err)
	}
	return page, nil
}

// RetryCleanupTask puts a FAILED task back to PENDING with its retry count
// reset, for the next pass.
func (s *Service) RetryCleanupTask(ctx context.Context, id string) (CleanupTask, error) {
	var task CleanupTask
	// Update and read in one transaction: the answer is the state :retry
	// set, even if a worker claims the task right after the commit.
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		n, err := s.q.CleanupTaskRetry(ctx, tx, s.now(), id)
		if err != nil {
			return fmt.Errorf("retry cleanup task: %w", err)
		}
		if task, err = taskFromRow(s.q.CleanupTaskGet(ctx, tx, id)); err != nil {
			return err
		}
		if n == 0 {
			return ErrCleanupTaskNotFailed
		}
		return nil
	})
	if err != nil {
		return CleanupTask{}, err
	}
	s.log.InfoContext(ctx, "cleanup task put back to PENDING", "task_id", id, "instance_id", task.InstanceID)
	return task, nil
}

// cleanupRecord is the audit record of a cleanup task that finished or
// failed for good (retries are not recorded: the task shows them).
func cleanupRecord(task CleanupTask, prov Provider, outcome string, at time.Time, details map[string]any) audit.Record {
	action := "cleanup_task.finished"
	if outcome != audit.OutcomeSuccess {
		action = "cleanup_task.failed"
	}
	if details == nil {
		details = map[string]any{}
	}
	details["instance_id"], details["provider"] = task.InstanceID, prov.Name
	return audit.Record{Actor: audit.System, Action: action, Target: "cleanup_task:" + task.ID, Outcome: outcome,
		Time: at, Details: details}
}
