package catalog

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/stewardhq/steward/internal/store"
)

// Orders is what the catalog asks of the orders made from it (the
// lifecycle implements it, wired in internal/server). Every method reads
// in tx, the caller's transaction, and must not write. "Live" orders are
// those not in a state their lifecycle marks deleted.
type Orders interface {
	// LiveOrdersOfCatalogItemTx counts the live orders of an item. A delete
	// of the item holds the item's row lock (FOR UPDATE on PostgreSQL)
	// while it asks, so an order create that reads the item with
	// [Service.ItemTx] in its own transaction either commits first (and is
	// counted) or waits and then finds the item gone.
	LiveOrdersOfCatalogItemTx(ctx context.Context, tx *store.Tx, catalogItemID string) (int, error)
	// LiveOrdersOfServiceTypeTx counts the live orders of a service type.
	LiveOrdersOfServiceTypeTx(ctx context.Context, tx *store.Tx, serviceType string) (int, error)
	// LiveAttributeSetsTx returns the stored attribute sets of each live
	// order of a service type, by order id.
	LiveAttributeSetsTx(ctx context.Context, tx *store.Tx, serviceType string) (map[string][]map[string]any, error)
}

// OrdersFuncs adapts functions to [Orders]; a nil function answers none.
type OrdersFuncs struct {
	OfCatalogItemFunc func(ctx context.Context, tx *store.Tx, catalogItemID string) (int, error)
	OfServiceTypeFunc func(ctx context.Context, tx *store.Tx, serviceType string) (int, error)
	AttributeSetsFunc func(ctx context.Context, tx *store.Tx, serviceType string) (map[string][]map[string]any, error)
}

// LiveOrdersOfCatalogItemTx calls OfCatalogItemFunc.
func (f OrdersFuncs) LiveOrdersOfCatalogItemTx(ctx context.Context, tx *store.Tx, id string) (int, error) {
	if f.OfCatalogItemFunc == nil {
		return 0, nil
	}
	return f.OfCatalogItemFunc(ctx, tx, id)
}

// LiveOrdersOfServiceTypeTx calls OfServiceTypeFunc.
func (f OrdersFuncs) LiveOrdersOfServiceTypeTx(ctx context.Context, tx *store.Tx, serviceType string) (int, error) {
	if f.OfServiceTypeFunc == nil {
		return 0, nil
	}
	return f.OfServiceTypeFunc(ctx, tx, serviceType)
}

// LiveAttributeSetsTx calls AttributeSetsFunc.
func (f OrdersFuncs) LiveAttributeSetsTx(ctx context.Context, tx *store.Tx, serviceType string) (map[string][]map[string]any, error) {
	if f.AttributeSetsFunc == nil {
		return nil, nil
	}
	return f.AttributeSetsFunc(ctx, tx, serviceType)
}

// LifecycleChecker says whether a lifecycle exists (the lifecycle domain,
// wired in internal/server), so a service type cannot name one that does
// not.
type LifecycleChecker interface {
	// CheckLifecycle returns nil when the lifecycle id exists, an error
	// wrapping [ErrUnknownLifecycle] when it does not, or another error
	// when it cannot tell.
	CheckLifecycle(ctx context.Context, id string) error
}

// LifecycleCheckerFunc adapts a function to [LifecycleChecker].
type LifecycleCheckerFunc func(ctx context.Context, id string) error

// CheckLifecycle calls f.
func (f LifecycleCheckerFunc) CheckLifecycle(ctx context.Context, id string) error { return f(ctx, id) }

// builtinLifecycles knows only the lifecycles every server has.
var builtinLifecycles = LifecycleCheckerFunc(func(_ context.Context, id string) error {
	if id == LifecycleSimple || id == LifecycleService {
		return nil
	}
	return fmt.Errorf("lifecycle %q: %w", id, ErrUnknownLifecycle)
})

// Config configures the Service. DB and ServiceTypes are required.
type Config struct {
	DB *store.DB
	// ServiceTypes is the registry of service types items are checked
	// against.
	ServiceTypes *ServiceTypes
	// Lifecycles checks the lifecycle a service type names. Defaults to
	// knowing the built-in ones (simple, service) only.
	Lifecycles LifecycleChecker
	// Orders is asked about live orders before an item or a service type
	// is changed or deleted. Defaults to none: every change is allowed.
	Orders Orders
	// Logger receives the catalog's logs. Defaults to discarding them.
	Logger *slog.Logger
	// Now reads the clock. Defaults to time.Now.
	Now func() time.Time
}

// Service serves the service types and owns the catalog items and the
// orders made from them (catalog item instances). It is safe
// for concurrent use by multiple goroutines.
type Service struct {
	cfg Config
	log *slog.Logger
	q   *queries
}

// New returns a Service. It panics when a required Config field is missing.
func New(cfg Config) *Service {
	if cfg.DB == nil || cfg.ServiceTypes == nil {
		panic("catalog: Config.DB and Config.ServiceTypes are required")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Lifecycles == nil {
		cfg.Lifecycles = builtinLifecycles
	}
	if cfg.Orders == nil {
		cfg.Orders = OrdersFuncs{}
	}
	return &Service{
		cfg: cfg,
		log: cfg.Logger.With("component", "catalog"),
		q:   newQueries(cfg.DB.Engine()),
	}
}

// serviceTypeCursorTime is the time of every service type page token:
// service types page by id alone, and a cursor needs a time.
var serviceTypeCursorTime = time.Unix(1, 0).UTC()

// now truncates to the stores' common precision, so what is written reads
// back equal.
func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }
