package catalog

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/stewardhq/steward/internal/store"
)

// OrderCounter counts the live orders (catalog item instances not yet
// terminated) made from a catalog item. The order flow implements it; a
// delete of the item asks it before removing the item.
type OrderCounter interface {
	// LiveOrdersOfCatalogItemTx returns the number of live orders of the
	// item, read in tx, the delete's transaction. It must not write. The
	// delete holds the item's row lock (FOR UPDATE on PostgreSQL) while it
	// asks, so an order create that reads the item with [Service.ItemTx] in
	// its own transaction either commits first (and is counted) or waits
	// and then finds the item gone.
	LiveOrdersOfCatalogItemTx(ctx context.Context, tx *store.Tx, catalogItemID string) (int, error)
}

// OrderCounterFunc adapts a function to [OrderCounter].
type OrderCounterFunc func(ctx context.Context, tx *store.Tx, catalogItemID string) (int, error)

// LiveOrdersOfCatalogItemTx calls f.
func (f OrderCounterFunc) LiveOrdersOfCatalogItemTx(ctx context.Context, tx *store.Tx, catalogItemID string) (int, error) {
	return f(ctx, tx, catalogItemID)
}

// Config configures the Service. DB and ServiceTypes are required.
type Config struct {
	DB *store.DB
	// ServiceTypes is the registry of service types items are checked
	// against.
	ServiceTypes *ServiceTypes
	// Orders, when set, is asked for an item's live orders before the item
	// is deleted. Defaults to none: every delete is allowed.
	Orders OrderCounter
	// Placement places orders and realises them (placement). Required for
	// orders; without it, creating one fails.
	Placement placer
	// Logger receives the catalog's logs. Defaults to discarding them.
	Logger *slog.Logger
	// Now reads the clock. Defaults to time.Now.
	Now func() time.Time
}

// Service serves the service types and owns the catalog items and the
// orders made from them (catalog item instances). It is safe
// for concurrent use by multiple goroutines.
type Service struct {
	cfg       Config
	log       *slog.Logger
	q         store.Queries
	lifecycle lifecycle
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
	return &Service{
		cfg: cfg,
		log: cfg.Logger.With("component", "catalog"),
		q:   store.MustLoadQueries(sqlFS, "sql", cfg.DB.Engine()),

		lifecycle: simpleLifecycle{},
	}
}

// serviceTypeCursorTime is the time of every service type page token:
// service types page by id alone, and a cursor needs a time.
var serviceTypeCursorTime = time.Unix(1, 0).UTC()

// ServiceType returns the service type with the id, or an error wrapping
// [ErrServiceTypeNotFound].
func (s *Service) ServiceType(id string) (ServiceType, error) {
	return s.cfg.ServiceTypes.Get(id)
}

// ServiceTypes returns a page of the service types, sorted by id.
func (s *Service) ServiceTypes(page store.PageRequest) store.Page[ServiceType] {
	size := cmp.Or(page.Size, store.DefaultPageSize)
	_, after := page.Keyset()
	var rows []ServiceType
	for _, st := range s.cfg.ServiceTypes.List() {
		if st.ID > after && len(rows) <= size {
			rows = append(rows, st)
		}
	}
	return store.NewPage(rows, size, func(st ServiceType) store.Cursor {
		return store.Cursor{Time: serviceTypeCursorTime, ID: st.ID}
	})
}

// now truncates to the stores' common precision, so what is written reads
// back equal.
func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }
