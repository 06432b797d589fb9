package lifecycle

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/store"
)

// ServiceTypeUsage tells which service types use a lifecycle. The catalog
// implements it; [Service.Delete] asks it before removing a lifecycle.
type ServiceTypeUsage interface {
	// ServiceTypesUsingLifecycle returns the ids of the service types whose
	// lifecycle is lifecycleID, none when it is unused. It must not write.
	ServiceTypesUsingLifecycle(ctx context.Context, lifecycleID string) ([]string, error)
}

// ServiceTypeUsageFunc adapts a function to [ServiceTypeUsage].
type ServiceTypeUsageFunc func(ctx context.Context, lifecycleID string) ([]string, error)

// ServiceTypesUsingLifecycle calls f.
func (f ServiceTypeUsageFunc) ServiceTypesUsingLifecycle(ctx context.Context, lifecycleID string) ([]string, error) {
	return f(ctx, lifecycleID)
}

// Config configures the Service. DB is required; Orders, Catalog,
// Placement and Jobs are required for orders.
type Config struct {
	DB *store.DB
	// Orders are the orders' reads that the domains below share: an
	// identity resolved to its order's id.
	Orders *order.Store
	// Catalog builds orders' specs from catalog items and knows their
	// service types.
	Catalog catalogView
	// Placement places and realises orders' attribute sets.
	Placement placer
	// Jobs queues the engine's validations in the transfers' transactions.
	Jobs jobInserter
	// Reconciles is the queue of order reconciles: the lifecycle works its
	// requests, and asks it for a parent's once its last child is removed.
	// Required for orders.
	Reconciles reconciles
	// Adapters, when set, are the adapters' status reports the deletion
	// gate waits for. Defaults to none: a deletion waits for no adapter.
	Adapters adapterReports
	// Runtimes, when set, are the app instances' runtimes as last
	// reported, shown on an order as its Healthy condition. Defaults to
	// none: no order has that condition.
	Runtimes Runtimes
	// Outputs, when set, are the instances' outputs, shown on their orders.
	// Defaults to none: orders show no outputs.
	Outputs InstanceOutputs
	// Cleanups, when set, are the cleanup tasks of orders' instances: one
	// order read shows those not done (cleanup). Defaults to none: it shows
	// nothing being removed.
	Cleanups Cleanups
	// Usage, when set, is asked for the service types using a lifecycle
	// before it is deleted. Defaults to none: every delete is allowed.
	Usage ServiceTypeUsage
	// TombstoneRetention is how long a removed order stays readable as a
	// tombstone before it is purged (AIP-164). Defaults to
	// DefaultTombstoneRetention.
	TombstoneRetention time.Duration
	// DeletionStuckAfter is how long an order may wait at its deletion gate
	// before its Ready condition says DeletionStuck and the stuck-deletion
	// metrics count it. Defaults to DefaultDeletionStuckAfter.
	DeletionStuckAfter time.Duration
	// Changed, when set, is told the id of each order a transaction
	// changed, once it has committed (live.Feed's Changed, for the console's
	// live pages). It must not block.
	Changed func(orderID string)
	// Logger receives the service's logs. Defaults to discarding them.
	Logger *slog.Logger
	// Now reads the clock. Defaults to time.Now.
	Now func() time.Time
}

const (
	// DefaultTombstoneRetention is AIP-164's suggested 30 days.
	DefaultTombstoneRetention = 30 * 24 * time.Hour
	// DefaultDeletionStuckAfter is HyperFleet's stuck threshold.
	DefaultDeletionStuckAfter = 10 * time.Minute
)

// Service stores lifecycle definitions and serves them with the built-ins.
// It is safe for concurrent use by multiple goroutines.
type Service struct {
	cfg Config
	log *slog.Logger
	q   *queries
	// orderLists are the order list queries, by kind (see orderListQueries).
	orderLists map[orderListKind]string
}

// New returns a Service. It panics when Config.DB is missing.
func New(cfg Config) *Service {
	if cfg.DB == nil {
		panic("lifecycle: Config.DB is required")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	cfg.TombstoneRetention = cmp.Or(cfg.TombstoneRetention, DefaultTombstoneRetention)
	cfg.DeletionStuckAfter = cmp.Or(cfg.DeletionStuckAfter, DefaultDeletionStuckAfter)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	q := newQueries(cfg.DB.Engine())
	return &Service{
		cfg:        cfg,
		log:        cfg.Logger.With("component", "lifecycle"),
		q:          q,
		orderLists: orderListQueries(cfg.DB.Engine(), q.orderList),
	}
}

// now truncates to the stores' common precision, so what is written reads
// back equal.
func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }
