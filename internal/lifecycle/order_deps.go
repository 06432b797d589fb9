package lifecycle

import (
	"cmp"
	"context"
	"slices"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/catalog"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/reconcile"
	"github.com/stewardhq/steward/internal/schema"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/store"
)

// catalogView is what orders need from the catalog (*catalog.Service).
type catalogView interface {
	Item(ctx context.Context, id string) (catalog.Item, error)
	ItemTx(ctx context.Context, tx *store.Tx, id string) (catalog.Item, error)
	BuildSpec(ctx context.Context, item catalog.Item, values []catalog.UserValue) (map[string]any, error)
	ApplyUserValues(ctx context.Context, item catalog.Item, base map[string]any, values []catalog.UserValue) (map[string]any, error)
	ServiceType(ctx context.Context, id string) (catalog.ServiceType, error)
	RequiredAdapters(ctx context.Context, id string) ([]string, error)
	HasRuntime(ctx context.Context, id string) (bool, error)
	Schema(ctx context.Context, serviceType string) (*schema.Schema, error)
	ValidateSpec(ctx context.Context, serviceType string, spec map[string]any) error
}

// placer is what the engine needs from placement (*placement.Service).
type placer interface {
	Place(ctx context.Context, p placement.PlaceParams) (placement.Placement, error)
	RecordTx(ctx context.Context, tx *store.Tx, p placement.RecordParams) error
	DeleteTx(ctx context.Context, tx *store.Tx, instanceID string) error
	CompleteReplacementTx(ctx context.Context, tx *store.Tx, c reconcile.Change) error
	AbandonReplacementTx(ctx context.Context, tx *store.Tx, c reconcile.Change) error
	UpdateTx(ctx context.Context, tx *store.Tx, p placement.UpdateParams) (placement.UpdateResult, error)
	ResourceTx(ctx context.Context, tx *store.Tx, instanceID string) (placement.Resource, error)
	Rehydrate(ctx context.Context, p placement.RehydrateParams) (operations.Operation, error)
}

// jobInserter queues River jobs in a transaction (*jobs.Client).
type jobInserter interface {
	InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) error
}

// RegisterWorkers adds the engine's River workers (validation) to the
// registry the jobs client is built with.
func (s *Service) RegisterWorkers(w *river.Workers) {
	river.AddWorker(w, &validateWorker{s: s})
	river.AddWorker(w, &reconcileWorker{s: s})
	river.AddWorker(w, &deletionGateWorker{s: s})
}

// definition returns a lifecycle's state machine, read through q (the
// caller's transaction, or the database). The caller must not change it.
func (s *Service) definition(ctx context.Context, q store.Querier, id string) (statemachine.Definition, error) {
	// The engine only reads a definition: a built-in's is shared, not
	// copied (copying it for every order of a list was 14% of its CPU).
	for _, l := range builtinLifecycles() {
		if l.ID == id {
			return l.Definition, nil
		}
	}
	l, err := s.lifecycleGetQ(ctx, q, id)
	if err != nil {
		return statemachine.Definition{}, err
	}
	return l.Definition, nil
}

// serviceType returns a service type with its compiled schema.
func (s *Service) serviceType(ctx context.Context, id string) (catalog.ServiceType, *schema.Schema, error) {
	st, err := s.cfg.Catalog.ServiceType(ctx, id)
	if err != nil {
		return catalog.ServiceType{}, nil, err
	}
	sch, err := s.cfg.Catalog.Schema(ctx, id)
	if err != nil {
		return catalog.ServiceType{}, nil, err
	}
	return st, sch, nil
}

func sortFields(fields []invalid.Field) {
	slices.SortFunc(fields, func(a, b invalid.Field) int { return cmp.Compare(a.Field, b.Field) })
}

func cmpOr(a, b string) string { return cmp.Or(a, b) }
