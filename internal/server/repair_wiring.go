package server

import (
	"context"
	"time"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/credentials"
	"github.com/stewardhq/steward/internal/lifecycle"
	"github.com/stewardhq/steward/internal/repair"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tokens"
)

// These adapt one built service's method to the shape another domain asks
// for; none holds a rule.

// repairProviders reads the service registry for the repair domain.
type repairProviders struct{ sprm *sprm.Service }

func (p repairProviders) RegisteredProvider(ctx context.Context, name string) (repair.Provider, error) {
	prov, err := p.sprm.Provider(ctx, name)
	if err != nil {
		return repair.Provider{}, err
	}
	return repair.Provider{Endpoint: prov.Endpoint, CallToken: prov.CallToken, Operations: prov.Operations}, nil
}

// placedOrders finds an order's current instance for the credentials
// domain.
type placedOrders struct{ lifecycle *lifecycle.Service }

func (p placedOrders) PlacedOrder(ctx context.Context, project, ref string) (credentials.Placed, error) {
	o, err := p.lifecycle.Order(ctx, project, ref)
	if err != nil {
		return credentials.Placed{}, err
	}
	return credentials.Placed{OrderID: o.ID, Project: o.Project, InstanceID: o.InstanceID, ProviderName: o.ProviderName}, nil
}

// workerTokens issues repair workers' tokens: a service account bound to
// one operation.
type workerTokens struct{ tokens *tokens.Service }

func (w workerTokens) IssueWorkerToken(ctx context.Context, operationID string, ttl time.Duration) (string, error) {
	_, secret, err := w.tokens.Create(ctx, tokens.CreateParams{
		Name: "repair-worker-" + operationID, Role: auth.RoleServiceAccount, Operation: operationID, TTL: ttl,
		CreatedBy: audit.System.Type + ":" + audit.System.ID,
	})
	return secret, err
}

func (w workerTokens) EndWorkerTokensTx(ctx context.Context, tx *store.Tx, operationID string) error {
	return w.tokens.RevokeOperationTx(ctx, tx, operationID)
}

// runtimeHealths let the lifecycle show an order's runtime health (its
// Healthy condition) as the repair domain last heard it.
type runtimeHealths struct{ repair *repair.Service }

func (r runtimeHealths) RuntimeHealth(ctx context.Context, orderID string) (lifecycle.RuntimeHealth, bool, error) {
	health, message, observed, ok, err := r.repair.RuntimeHealth(ctx, orderID)
	return lifecycle.RuntimeHealth{Health: health, Message: message, ObservedTime: observed}, ok, err
}
