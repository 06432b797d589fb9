package repair

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// maxSteps bounds an operation's steps (the seed's eight and a worker's own).
const maxSteps = 64

// Report is a worker's report on an operation, with the next safe action
// it suggests when it failed.
type Report struct {
	provider.RepairReport
	NextSafeAction string `json:"next_safe_action"`
}

// ApplyReport merges a worker's report into its operation: steps by name
// (a step moves only forward: pending → running → succeeded, failed or
// skipped), the operation's status forward likewise, and the runtime state
// it carries becomes the app instance's. The report and its audit record
// commit together. A report on a finished operation that changes nothing
// answers the operation as it is (a retried report); one that would change
// it is ErrOperationDone. Only the operation's worker token, the app
// instance's provider or an admin may report.
func (s *Service) ApplyReport(ctx context.Context, project, appInstanceID, id string, r Report) (Operation, error) {
	if err := checkReport(r); err != nil {
		return Operation{}, err
	}
	op, err := s.Operation(ctx, project, appInstanceID, id)
	if err != nil {
		return Operation{}, err
	}
	if err := mayReport(ctx, op); err != nil {
		return Operation{}, err
	}
	audit.Describe(ctx, "app_instance_repair_operation:"+op.ID, map[string]any{"status": r.Status})
	for range 5 {
		err = s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
			cur, err := s.operationQ(ctx, tx, id)
			if err != nil {
				return err
			}
			next, err := merge(cur, r, s.now())
			if err != nil {
				return err
			}
			if cur.Done() || next.Status == cur.Status && sameSteps(next.Steps, cur.Steps) &&
				sameError(next.Error, cur.Error) && r.RuntimeState == nil {
				op = cur
				return nil // a retried report: nothing to write
			}
			if op, err = s.update(ctx, tx, next); err != nil {
				return err
			}
			s.changedTx(tx, op.AppInstanceID)
			if r.RuntimeState == nil {
				return nil
			}
			app := order.AppInstance{ID: op.AppInstanceID, Project: op.Project}
			_, err = s.recordRuntimeTx(ctx, tx, app, *r.RuntimeState, op.UpdateTime)
			return err
		})
		if !errors.Is(err, store.ErrStale) {
			break
		}
	}
	if err != nil {
		return Operation{}, err
	}
	if op.Done() {
		s.log.InfoContext(ctx, "repair operation finished", "repair_operation_id", op.ID, "status", op.Status,
			"app_instance_id", op.AppInstanceID, "error", op.Error)
	}
	return op, nil
}

// mayReport allows the operation's own worker, its provider and admins.
func mayReport(ctx context.Context, op Operation) error {
	p, ok := auth.PrincipalFrom(ctx)
	if !ok || p.Role == auth.RoleAdmin || p.Operation == op.ID || p.Provider != "" && p.Provider == op.ProviderName {
		return nil
	}
	return fmt.Errorf("%w: %s may not report on repair operation %s", auth.ErrPermissionDenied, p, op.ID)
}

// checkReport refuses a report outside the contract (400).
func checkReport(r Report) error {
	var errs invalid.Errors
	switch r.Status {
	case provider.RepairPending, provider.RepairRunning, provider.RepairSucceeded:
	case provider.RepairFailed:
		if r.Error == nil || r.Error.Code == "" {
			errs.Add("error.code", "is required with status failed: a deterministic code")
		}
	default:
		errs.Add("status", "must be one of pending, running, succeeded, failed")
	}
	if len(r.Steps) > maxSteps {
		errs.Add("steps", "must hold at most %d steps", maxSteps)
	}
	seen := map[string]bool{}
	for i, st := range r.Steps {
		at := "steps[" + strconv.Itoa(i) + "]."
		switch {
		case !stepNamePattern.MatchString(st.Name):
			errs.Add(at+"name", "must match %s", stepNamePattern)
		case seen[st.Name]:
			errs.Add(at+"name", "repeats step %q", st.Name)
		}
		seen[st.Name] = true
		if stepRank(st.Status) < 0 {
			errs.Add(at+"status", "must be one of pending, running, succeeded, failed, skipped")
		}
	}
	if r.RuntimeState != nil {
		addRuntimeErrors(&errs, "runtime_state.", *r.RuntimeState)
	}
	return errs.Err()
}

// stepRank orders step statuses; a step never moves to a lower rank, nor
// between two finished statuses.
func stepRank(status string) int {
	switch status {
	case provider.RepairPending:
		return 0
	case provider.RepairRunning:
		return 1
	case provider.RepairSucceeded, provider.RepairFailed, provider.RepairSkipped:
		return 2
	}
	return -1
}

// merge returns cur with r applied: ErrReportRegression names what would
// move backwards, ErrOperationDone a change to a finished operation.
// Steps are merged by name; a step the operation does not have yet (a
// worker's own) is appended. Start and finish times the worker leaves out
// are now.
func merge(cur Operation, r Report, now time.Time) (Operation, error) {
	next := cur
	next.Steps = slices.Clone(cur.Steps)
	for _, st := range r.Steps {
		i := slices.IndexFunc(next.Steps, func(s Step) bool { return s.Name == st.Name })
		if i < 0 {
			if len(next.Steps) >= maxSteps {
				return Operation{}, invalid.New("steps", "the operation would hold more than %d steps", maxSteps)
			}
			next.Steps = append(next.Steps, Step{Name: st.Name, Status: provider.RepairPending})
			i = len(next.Steps) - 1
		}
		old := next.Steps[i]
		if stepRank(st.Status) < stepRank(old.Status) || stepRank(old.Status) == 2 && st.Status != old.Status {
			return Operation{}, fmt.Errorf("%w: step %s is %s and cannot become %s", ErrReportRegression, st.Name,
				old.Status, st.Status)
		}
		ns := Step{Name: st.Name, Status: st.Status, Message: st.Message, StartedAt: old.StartedAt,
			FinishedAt: old.FinishedAt}
		if st.StartedAt != nil {
			ns.StartedAt = utc(st.StartedAt)
		}
		if st.FinishedAt != nil {
			ns.FinishedAt = utc(st.FinishedAt)
		}
		if ns.StartedAt == nil && st.Status != provider.RepairPending && st.Status != provider.RepairSkipped {
			ns.StartedAt = &now
		}
		if ns.FinishedAt == nil && stepRank(st.Status) == 2 {
			ns.FinishedAt = &now
		}
		if ns.Message == "" {
			ns.Message = old.Message
		}
		next.Steps[i] = ns
	}
	switch {
	case stepRank(r.Status) < stepRank(cur.Status):
		return Operation{}, fmt.Errorf("%w: the operation is %s and cannot become %s", ErrReportRegression,
			cur.Status, r.Status)
	case cur.Done() && r.Status != cur.Status:
		return Operation{}, fmt.Errorf("%w: operation %s %s", ErrOperationDone, cur.ID, cur.Status)
	}
	next.Status = r.Status
	if r.Error != nil {
		e := *r.Error
		next.Error = &e
	}
	if r.NextSafeAction != "" {
		next.NextSafeAction = r.NextSafeAction
	}
	if next.Status == provider.RepairFailed && next.NextSafeAction == "" {
		next.NextSafeAction = NextRetry
	}
	if cur.Done() && !sameSteps(next.Steps, cur.Steps) {
		return Operation{}, fmt.Errorf("%w: operation %s %s", ErrOperationDone, cur.ID, cur.Status)
	}
	return next, nil
}

// sameSteps compares steps by what a report sets.
func sameSteps(a, b []Step) bool {
	return slices.EqualFunc(a, b, func(x, y Step) bool {
		return x.Name == y.Name && x.Status == y.Status && x.Message == y.Message
	})
}

func utc(t *time.Time) *time.Time {
	u := t.UTC().Truncate(time.Microsecond)
	return &u
}

// stepNamePattern keeps step names snake_case like the seed's.
var stepNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

func sameError(a, b *provider.RepairError) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
