package repair

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// Request starts an operation on an app instance, as the seed's operation
// contract says: the shape is checked (400), the app instance must be
// placed on a provider that executes repairs (409), a destructive repair
// must be proven safe by the reported topology (409 with the next safe
// action), and only one operation runs per app instance at a time (409
// naming it). The operation, its audit record and its delivery job are
// written in one transaction. A request run again under the same
// idempotency key returns the operation the first one started.
func (s *Service) Request(ctx context.Context, r Request) (Operation, error) {
	if err := checkShape(r); err != nil {
		return Operation{}, err
	}
	if op, err := s.byRequestKey(ctx, r.RequestKey); !errors.Is(err, ErrOperationNotFound) {
		return op, err
	}
	app, err := s.appInstance(ctx, r.Project, r.AppInstanceID)
	if err != nil {
		return Operation{}, err
	}
	if r.Action == provider.RepairActionRestart && app.RuntimeKind != KindSimple {
		return Operation{}, restartRefused{kind: app.RuntimeKind}
	}
	if err := s.checkPlaced(ctx, app); err != nil {
		return Operation{}, err
	}
	rt, err := s.runtime(ctx, s.cfg.DB, app.ID)
	if err != nil {
		return Operation{}, err
	}
	if err := checkSafe(r, app.RuntimeKind, rt); err != nil {
		return Operation{}, err
	}
	if err := s.checkNoneRunning(ctx, s.cfg.DB, app.ID); err != nil {
		return Operation{}, err
	}
	t := s.now()
	op := Operation{
		ID: store.NewID(), Project: app.Project, AppInstanceID: app.ID, InstanceID: app.InstanceID,
		ProviderName: app.ProviderName, ServiceType: app.ServiceType, Action: r.Action, Scope: r.Scope,
		TargetMemberID: r.TargetMemberID, ComponentKey: r.ComponentKey, Status: provider.RepairPending,
		Steps: initialSteps(), IdempotencyKey: r.IdempotencyKey, RequestedBy: requester(ctx), Version: 1,
		CreateTime: t, UpdateTime: t,
	}
	audit.Describe(ctx, "", map[string]any{"repair_operation_id": op.ID, "action": op.Action, "scope": op.Scope,
		"target_member_id": op.TargetMemberID})
	err = s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		_, err := s.q.RepairInsert(ctx, tx, RepairInsertParams{ID: op.ID, Project: op.Project,
			AppInstanceID: op.AppInstanceID, InstanceID: op.InstanceID, ProviderName: op.ProviderName,
			ServiceType: op.ServiceType, Action: op.Action, Scope: op.Scope, TargetMemberID: op.TargetMemberID,
			ComponentKey: op.ComponentKey, Status: op.Status, Steps: store.JSON(op.Steps),
			IdempotencyKey: op.IdempotencyKey, RequestKey: r.RequestKey, RequestedBy: op.RequestedBy, CreateTime: t,
			UpdateTime: t})
		if errors.Is(err, store.ErrAlreadyExists) {
			// Another request started one between the check and here.
			return s.checkNoneRunning(ctx, tx, app.ID)
		}
		if err != nil {
			return fmt.Errorf("record repair operation: %w", err)
		}
		s.changedTx(tx, op.AppInstanceID)
		return s.cfg.Jobs.InsertTx(ctx, tx, deliverArgs{OperationID: op.ID}, s.insertOpts())
	})
	if err != nil {
		return Operation{}, err
	}
	s.log.InfoContext(ctx, "repair operation requested", "repair_operation_id", op.ID, "app_instance_id", app.ID,
		"action", op.Action, "scope", op.Scope, "target_member_id", op.TargetMemberID, "provider", op.ProviderName)
	return op, nil
}

// checkPlaced refuses an app instance that has no provider to run the
// operation, or whose provider does not execute repairs.
func (s *Service) checkPlaced(ctx context.Context, app order.AppInstance) error {
	switch {
	case app.Deleting:
		return fmt.Errorf("%w: app instance %s is being deleted", ErrAppInstanceNotReady, app.ID)
	case app.InstanceID == "" || app.ProviderName == "":
		return fmt.Errorf("%w: app instance %s (state %s) has no instance on a provider yet", ErrAppInstanceNotReady,
			app.ID, app.State)
	}
	prov, err := s.cfg.Providers.RegisteredProvider(ctx, app.ProviderName)
	if err != nil {
		return err
	}
	if !slices.Contains(prov.Operations, provider.OperationRepair) {
		return fmt.Errorf("%w: provider %s did not register the %q operation", ErrRepairNotSupported,
			app.ProviderName, provider.OperationRepair)
	}
	return nil
}

// checkNoneRunning refuses when the app instance has an unfinished
// operation. The unique partial index repair_operations_one_running
// settles races.
func (s *Service) checkNoneRunning(ctx context.Context, q store.Querier, appInstanceID string) error {
	running, err := s.q.RepairRunning(ctx, q, appInstanceID)
	switch {
	case err == nil:
		return &InProgressError{OperationID: running}
	case errors.Is(err, store.ErrNotFound):
		return nil
	}
	return fmt.Errorf("look up running repair operations: %w", err)
}

func (s *Service) byRequestKey(ctx context.Context, key string) (Operation, error) {
	if key == "" {
		return Operation{}, ErrOperationNotFound
	}
	row, err := s.q.RepairByRequestKey(ctx, s.cfg.DB, key)
	if errors.Is(err, store.ErrNotFound) {
		return Operation{}, ErrOperationNotFound
	}
	if err != nil {
		return Operation{}, err
	}
	return operationFromRow(row)
}

func (s *Service) insertOpts() *river.InsertOpts {
	return &river.InsertOpts{MaxAttempts: s.cfg.DeliveryAttempts, Queue: s.cfg.JobQueue}
}

// requester names who asked, uniquely ("type:id", with the token it came by: auth.Principal.Key).
func requester(ctx context.Context) string {
	if p, ok := auth.PrincipalFrom(ctx); ok {
		return p.Key()
	}
	return "anonymous"
}
