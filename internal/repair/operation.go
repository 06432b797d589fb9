package repair

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// Operation is one reconcile, repair or restart of an app instance.
type Operation struct {
	ID             string
	Project        string
	AppInstanceID  string
	InstanceID     string
	ProviderName   string
	ServiceType    string
	Action         string
	Scope          string
	TargetMemberID string
	ComponentKey   string
	// Status is pending, running, succeeded or failed.
	Status         string
	Steps          []Step
	Error          *provider.RepairError
	NextSafeAction string
	IdempotencyKey string
	RequestedBy    string
	// DeliverTime is when the provider accepted the operation.
	DeliverTime *time.Time
	Version     int64
	CreateTime  time.Time
	UpdateTime  time.Time
	FinishTime  *time.Time
}

// Step is one step of an operation.
type Step struct {
	Name       string     `json:"name"`
	Status     string     `json:"status"`
	Message    string     `json:"message"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// Done reports whether the operation has finished.
func (op Operation) Done() bool { return terminal(op.Status) }

// Phase is the current step: the running one, else the first pending one
// while the operation runs; once it is finished, the first step that
// failed, else the last one that succeeded.
func (op Operation) Phase() string {
	for _, st := range op.Steps {
		if st.Status == provider.RepairRunning {
			return st.Name
		}
	}
	if !op.Done() {
		for _, st := range op.Steps {
			if st.Status == provider.RepairPending {
				return st.Name
			}
		}
	}
	for _, st := range op.Steps {
		if st.Status == provider.RepairFailed {
			return st.Name // where it broke
		}
	}
	for _, st := range slices.Backward(op.Steps) {
		if st.Status == provider.RepairSucceeded {
			return st.Name
		}
	}
	return ""
}

func terminal(status string) bool {
	return status == provider.RepairSucceeded || status == provider.RepairFailed || status == provider.RepairSkipped
}

// initialSteps are the seed's eight steps, pending.
func initialSteps() []Step {
	steps := make([]Step, len(provider.RepairStepNames))
	for i, n := range provider.RepairStepNames {
		steps[i] = Step{Name: n, Status: provider.RepairPending}
	}
	return steps
}

// operationRow is a row of the queries that read whole repair operations:
// they return the same columns.
type operationRow interface {
	RepairGetRow | RepairByRequestKeyRow | RepairListRow
}

func operationFromRow[R operationRow](row R) (Operation, error) {
	r := RepairGetRow(row)
	op := Operation{ID: r.ID, Project: r.Project, AppInstanceID: r.AppInstanceID, InstanceID: r.InstanceID,
		ProviderName: r.ProviderName, ServiceType: r.ServiceType, Action: r.Action, Scope: r.Scope,
		TargetMemberID: r.TargetMemberID, ComponentKey: r.ComponentKey, Status: r.Status,
		NextSafeAction: r.NextSafeAction, IdempotencyKey: r.IdempotencyKey, RequestedBy: r.RequestedBy,
		DeliverTime: r.DeliverTime, Version: r.Version, CreateTime: r.CreateTime, UpdateTime: r.UpdateTime,
		FinishTime: r.FinishTime}
	if err := json.Unmarshal(r.Steps, &op.Steps); err != nil {
		return Operation{}, fmt.Errorf("read steps of repair operation %s: %w", op.ID, err)
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		if err := json.Unmarshal(r.Error, &op.Error); err != nil {
			return Operation{}, fmt.Errorf("read error of repair operation %s: %w", op.ID, err)
		}
	}
	return op, nil
}

// Operation returns an app instance's operation.
func (s *Service) Operation(ctx context.Context, project, appInstanceID, id string) (Operation, error) {
	op, err := s.operationQ(ctx, s.cfg.DB, id)
	if err == nil && (op.Project != project || op.AppInstanceID != appInstanceID) {
		return Operation{}, fmt.Errorf("%w: %s", ErrOperationNotFound, id)
	}
	return op, err
}

func (s *Service) operationQ(ctx context.Context, q store.Querier, id string) (Operation, error) {
	row, err := s.q.RepairGet(ctx, q, id)
	if errors.Is(err, store.ErrNotFound) {
		return Operation{}, fmt.Errorf("%w: %s", ErrOperationNotFound, id)
	}
	if err != nil {
		return Operation{}, fmt.Errorf("read repair operation %s: %w", id, err)
	}
	op, err := operationFromRow(row)
	if err != nil {
		return Operation{}, fmt.Errorf("read repair operation %s: %w", id, err)
	}
	return op, nil
}

// ListParams filters an app instance's operations.
type ListParams struct {
	Project       string
	AppInstanceID string
	// Status, when not "", keeps operations in that status.
	Status string
	Page   store.PageRequest
}

// Operations lists an app instance's operations, oldest first. The app
// instance must exist (its operations outlive nothing else).
func (s *Service) Operations(ctx context.Context, p ListParams) (store.Page[Operation], error) {
	if _, err := s.appInstance(ctx, p.Project, p.AppInstanceID); err != nil {
		return store.Page[Operation]{}, err
	}
	size := p.Page.Size
	if size == 0 {
		size = store.DefaultPageSize
	}
	_, after := p.Page.Keyset()
	rows, err := s.q.RepairList(ctx, s.cfg.DB, RepairListParams{Project: p.Project, AppInstanceID: p.AppInstanceID,
		Status: p.Status, MinID: after, Limit: int64(size + 1)})
	if err != nil {
		return store.Page[Operation]{}, fmt.Errorf("list repair operations: %w", err)
	}
	list := make([]Operation, 0, len(rows))
	for _, r := range rows {
		op, err := operationFromRow(r)
		if err != nil {
			return store.Page[Operation]{}, fmt.Errorf("list repair operations: %w", err)
		}
		list = append(list, op)
	}
	return store.NewPage(list, p.Page, func(op Operation) store.Cursor {
		return store.Cursor{Time: op.CreateTime, ID: op.ID}
	}), nil
}

// update writes op's mutable fields if its version is still the one read.
func (s *Service) update(ctx context.Context, tx *store.Tx, op Operation) (Operation, error) {
	t := s.now()
	var opErr any
	if op.Error != nil {
		opErr = op.Error
	}
	if op.Done() && op.FinishTime == nil {
		op.FinishTime = &t
		if err := s.cfg.Tokens.EndWorkerTokensTx(ctx, tx, op.ID); err != nil {
			return Operation{}, err
		}
	}
	n, err := s.q.RepairUpdate(ctx, tx, RepairUpdateParams{Status: op.Status, Steps: store.JSON(op.Steps),
		Error: store.JSON(opErr), NextSafeAction: op.NextSafeAction, DeliverTime: op.DeliverTime, UpdateTime: t,
		FinishTime: op.FinishTime, ID: op.ID, Version: op.Version})
	if err != nil {
		return Operation{}, fmt.Errorf("update repair operation %s: %w", op.ID, err)
	}
	if n == 0 {
		return Operation{}, fmt.Errorf("update repair operation %s: %w", op.ID, store.ErrStale)
	}
	op.Version++
	op.UpdateTime = t
	return op, nil
}
