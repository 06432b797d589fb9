package catalog

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/store"
)

// Config configures the Service. DB, ServiceTypes and Orders are required.
type Config struct {
	DB *store.DB
	// ServiceTypes is the registry of service types items are checked
	// against.
	ServiceTypes *ServiceTypes
	// Orders are the orders made from the catalog: an item or a type is
	// not removed, nor a type changed, under live ones.
	Orders *order.Store
	// Lifecycles tells whether a lifecycle a service type names is stored.
	// Defaults to none: a type may name a built-in lifecycle only.
	Lifecycles StoredLifecycles
	// Logger receives the catalog's logs. Defaults to discarding them.
	Logger *slog.Logger
	// Now reads the clock. Defaults to time.Now.
	Now func() time.Time
}

// StoredLifecycles tells whether a lifecycle is stored. The lifecycle,
// which sits above the catalog and owns them, implements it.
type StoredLifecycles interface {
	LifecycleStored(ctx context.Context, id string) (bool, error)
}

// Service serves the service types and owns the catalog items. It is safe
// for concurrent use by multiple goroutines.
type Service struct {
	cfg Config
	log *slog.Logger
	q   *queries
}

// New returns a Service. It panics when a required Config field is missing.
func New(cfg Config) *Service {
	if cfg.DB == nil || cfg.ServiceTypes == nil || cfg.Orders == nil {
		panic("catalog: Config.DB, Config.ServiceTypes and Config.Orders are required")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
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
