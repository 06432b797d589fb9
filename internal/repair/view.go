package repair

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// View is an app instance as GET …/app-instances/{id} shows it: the order's
// placement, its runtime as last reported, the running operation and the
// actions a client may offer.
type View struct {
	ID           string `json:"id"`
	Path         string `json:"path"`
	Project      string `json:"project"`
	ServiceType  string `json:"service_type"`
	State        string `json:"state"`
	InstanceID   string `json:"instance_id"`
	ProviderName string `json:"provider_name"`
	Runtime      struct {
		Kind string `json:"kind"`
	} `json:"runtime"`
	// RuntimeState is nil until the provider reports the runtime.
	RuntimeState *Runtime `json:"runtime_state"`
	// ActiveRepairOperationID names the unfinished operation, if any.
	ActiveRepairOperationID *string `json:"active_repair_operation_id"`
	// SuggestedActions are what a UI should offer (the seed's UI
	// guidance): reconcile always; repair; restart only for simple runtimes.
	SuggestedActions []string `json:"suggested_actions"`
}

// AppInstance returns the app instance's view.
func (s *Service) AppInstance(ctx context.Context, project, id string) (View, error) {
	app, err := s.appInstance(ctx, project, id)
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, app)
}

func (s *Service) view(ctx context.Context, app order.AppInstance) (View, error) {
	v := View{ID: app.ID, Path: "projects/" + app.Project + "/app-instances/" + app.ID, Project: app.Project,
		ServiceType: app.ServiceType, State: app.State, InstanceID: app.InstanceID, ProviderName: app.ProviderName}
	v.Runtime.Kind = app.RuntimeKind
	rt, err := s.runtime(ctx, s.cfg.DB, app.ID)
	if err != nil {
		return View{}, err
	}
	v.RuntimeState = rt
	running, err := s.q.RepairRunning(ctx, s.cfg.DB, app.ID)
	switch {
	case err == nil:
		v.ActiveRepairOperationID = &running
	case !errors.Is(err, store.ErrNotFound):
		return View{}, fmt.Errorf("look up running repair operations: %w", err)
	}
	v.SuggestedActions = []string{provider.RepairActionReconcile, provider.RepairActionRepair}
	if app.RuntimeKind == KindSimple {
		v.SuggestedActions = append(v.SuggestedActions, provider.RepairActionRestart)
	}
	return v, nil
}
