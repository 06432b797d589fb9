package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/lifecycle"
	"github.com/stewardhq/steward/internal/repair"
	"github.com/stewardhq/steward/internal/tokens"
)

// appInstances are the repair domain's view of orders: an order whose
// service type declares a runtime.
type appInstances struct{ s *Server }

func (a appInstances) AppInstance(ctx context.Context, project, id string) (repair.AppInstance, error) {
	o, err := a.s.lifecycle.Order(ctx, project, id)
	if errors.Is(err, lifecycle.ErrOrderNotFound) {
		return repair.AppInstance{}, fmt.Errorf("%w: %s", repair.ErrAppInstanceNotFound, id)
	}
	if err != nil {
		return repair.AppInstance{}, err
	}
	st, err := a.s.catalog.ServiceType(ctx, o.ServiceType)
	if err != nil {
		return repair.AppInstance{}, err
	}
	if st.Runtime == nil {
		return repair.AppInstance{}, fmt.Errorf("%w: order %s is of service type %s, which declares no runtime",
			repair.ErrAppInstanceNotFound, o.ID, o.ServiceType)
	}
	return repair.AppInstance{
		ID: o.ID, Project: o.Project, ServiceType: o.ServiceType, RuntimeKind: st.Runtime.Kind,
		InstanceID: o.InstanceID, ProviderName: o.ProviderName, State: o.State, Deleting: o.DeletedAt != nil,
	}, nil
}

// repairProviders reads the service registry for the repair domain.
type repairProviders struct{ s *Server }

func (p repairProviders) ProviderEndpoint(ctx context.Context, name string) (string, []string, error) {
	prov, err := p.s.sprm.Provider(ctx, name)
	if err != nil {
		return "", nil, err
	}
	return prov.Endpoint, prov.Operations, nil
}

// workerTokens issues repair workers' tokens; the tokens service is built
// after the repair domain.
type workerTokens struct{ s *Server }

func (w workerTokens) IssueWorkerToken(ctx context.Context, operationID string, ttl time.Duration) (string, error) {
	_, secret, err := w.s.tokens.Create(ctx, tokens.CreateParams{
		Name: "repair-worker-" + operationID, Role: auth.RoleServiceAccount, Operation: operationID, TTL: ttl,
		CreatedBy: audit.System.Type + ":" + audit.System.ID,
	})
	return secret, err
}

// runtimeHealths let the lifecycle show an order's runtime health (its
// Healthy condition); the repair domain is built after the lifecycle.
type runtimeHealths struct{ s *Server }

func (r runtimeHealths) RuntimeHealth(ctx context.Context, orderID string) (lifecycle.RuntimeHealth, bool, error) {
	health, message, observed, ok, err := r.s.repair.RuntimeHealth(ctx, orderID)
	return lifecycle.RuntimeHealth{Health: health, Message: message, ObservedTime: observed}, ok, err
}
