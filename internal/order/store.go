package order

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/store"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// ErrNotFound is returned for an order that does not exist or is another
// project's (404, not 403).
var ErrNotFound = errors.New("order not found")

// ErrNoRuntime is returned for an app instance whose order's service type
// declares no runtime.
var ErrNoRuntime = errors.New("the order's service type declares no runtime")

// ServiceType is what the order's reads need of a service type.
type ServiceType struct {
	// IdentityAttribute is the attribute whose value identifies an order
	// of the type in its project; "" when the type has none.
	IdentityAttribute string
	// RuntimeKind is the kind of runtime its orders run; "" when it
	// declares none.
	RuntimeKind string
}

// Config configures a [Store]. DB is required.
type Config struct {
	DB *store.DB
	// ServiceType describes a service type (catalog.ServiceTypes.OrderType).
	// Without it no type has an identity or a runtime: an order is named
	// by its id only.
	ServiceType func(ctx context.Context, name string) (ServiceType, error)
}

// Store reads orders. It is safe for concurrent use.
type Store struct {
	cfg Config
	q   *queries
}

// New returns a Store. It panics when Config.DB is missing.
func New(cfg Config) *Store {
	if cfg.DB == nil {
		panic("order: Config.DB is required")
	}
	if cfg.ServiceType == nil {
		cfg.ServiceType = func(context.Context, string) (ServiceType, error) { return ServiceType{}, nil }
	}
	return &Store{cfg: cfg, q: newQueries(cfg.DB.Engine())}
}

// Resolve returns the id of the order ref names in project: ref is its id,
// or "<service_type>.<identity_attribute>=<value>" (LSM's service
// identity, for types that declare one). An identity that names no live
// order is [ErrNotFound]; an id is returned as it is, unread.
func (s *Store) Resolve(ctx context.Context, project, ref string) (string, error) {
	typeAndAttr, value, ok := strings.Cut(ref, "=")
	if !ok {
		return ref, nil
	}
	serviceType, attr, ok := strings.Cut(typeAndAttr, ".")
	if !ok {
		return "", fmt.Errorf("%w: %q is neither an id nor <service_type>.<attribute>=<value>", ErrNotFound, ref)
	}
	st, err := s.cfg.ServiceType(ctx, serviceType)
	if err != nil || st.IdentityAttribute == "" || st.IdentityAttribute != attr {
		return "", fmt.Errorf("%w: service type %q has no identity attribute %q", ErrNotFound, serviceType, attr)
	}
	id, err := s.q.OrderIDByIdentity(ctx, s.cfg.DB, OrderIDByIdentityParams{ServiceType: serviceType, Identity: value,
		Project: project})
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("%w: %s", ErrNotFound, ref)
	}
	return id, err
}

// LockFacts are what a change from below the lifecycle (an adapter's
// report) is checked against: the order's generation and whether it is
// being deleted.
type LockFacts struct {
	Generation int64
	DeletedAt  *time.Time
	// Terminal is set once the order is in a state its lifecycle marks
	// deleted: removed, a tombstone.
	Terminal bool
}

// Deleting says whether the order waits to be removed: its deletion was
// asked for and it is not removed yet.
func (f LockFacts) Deleting() bool { return f.DeletedAt != nil && !f.Terminal }

// LockTx reads the lock facts of project's order id in tx, locking its row
// on PostgreSQL (on SQLite tx holds the write lock), so that they hold
// until tx ends. A deleting order and a tombstone are read too.
func (s *Store) LockTx(ctx context.Context, tx *store.Tx, project, id string) (LockFacts, error) {
	row, err := s.q.OrderLockFacts(ctx, tx, id)
	return lockFacts(OrderFactsRow(row), err, project)
}

// Facts reads the lock facts of project's order id without a lock.
func (s *Store) Facts(ctx context.Context, project, id string) (LockFacts, error) {
	row, err := s.q.OrderFacts(ctx, s.cfg.DB, id)
	return lockFacts(row, err, project)
}

func lockFacts(row OrderFactsRow, err error, project string) (LockFacts, error) {
	if errors.Is(err, store.ErrNotFound) || (err == nil && row.Project != project) {
		return LockFacts{}, ErrNotFound
	}
	if err != nil {
		return LockFacts{}, fmt.Errorf("read order: %w", err)
	}
	return LockFacts{Generation: row.Generation, DeletedAt: row.DeletedAt, Terminal: row.Terminal}, nil
}

// AppInstance is an order whose service type declares a runtime: what a
// repair of it needs to know.
type AppInstance struct {
	ID          string
	Project     string
	ServiceType string
	// RuntimeKind is the kind of the service type's runtime.
	RuntimeKind string
	// InstanceID and ProviderName say where the order is realised; empty
	// until it is placed.
	InstanceID   string
	ProviderName string
	State        string
	// Deleting is set once the order's deletion was asked for.
	Deleting bool
}

// AppInstance reads the app instance ref (an id or an identity, as
// [Store.Resolve] takes) names in project: [ErrNotFound] when there is no
// such order, [ErrNoRuntime] when its type declares no runtime.
func (s *Store) AppInstance(ctx context.Context, project, ref string) (AppInstance, error) {
	id, err := s.Resolve(ctx, project, ref)
	if err != nil {
		return AppInstance{}, err
	}
	row, err := s.q.OrderAppInstance(ctx, s.cfg.DB, id, project)
	if errors.Is(err, store.ErrNotFound) {
		return AppInstance{}, fmt.Errorf("%w: %s", ErrNotFound, ref)
	}
	if err != nil {
		return AppInstance{}, fmt.Errorf("read order %s: %w", id, err)
	}
	st, err := s.cfg.ServiceType(ctx, row.ServiceType)
	if err != nil {
		return AppInstance{}, err
	}
	if st.RuntimeKind == "" {
		return AppInstance{}, fmt.Errorf("%w: order %s is of service type %s", ErrNoRuntime, id, row.ServiceType)
	}
	return AppInstance{ID: row.ID, Project: row.Project, ServiceType: row.ServiceType, RuntimeKind: st.RuntimeKind,
		InstanceID: row.InstanceID, ProviderName: row.ProviderName, State: row.State,
		Deleting: row.DeletedAt != nil}, nil
}

// LiveOfItemTx counts the live orders made from a catalog item, in tx.
func (s *Store) LiveOfItemTx(ctx context.Context, tx *store.Tx, itemID string) (int, error) {
	n, err := s.q.OrderLiveOfItem(ctx, tx, itemID)
	return int(n), err
}

// LiveOfTypeTx counts the live orders of a service type, in tx.
func (s *Store) LiveOfTypeTx(ctx context.Context, tx *store.Tx, serviceType string) (int, error) {
	n, err := s.q.OrderLiveOfType(ctx, tx, serviceType)
	return int(n), err
}

// LiveAttributesTx returns the attribute sets of every live order of a
// service type, by order id, in tx.
func (s *Store) LiveAttributesTx(ctx context.Context, tx *store.Tx, serviceType string) (map[string]Attributes, error) {
	rows, err := s.q.OrderLiveAttributes(ctx, tx, serviceType)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Attributes, len(rows))
	for _, row := range rows {
		var sets Attributes
		if err := json.Unmarshal(row.Attributes, &sets); err != nil {
			return nil, fmt.Errorf("attributes of order %s: %w", row.ID, err)
		}
		out[row.ID] = sets
	}
	return out, nil
}

// Summary is an order without its documents (attribute sets, labels,
// values): what a decision about it from outside reads (the sentinel's).
type Summary struct {
	ID, Project, ServiceType string
	Generation               int64
	State, Status            string
	DeletedAt                *time.Time
	Terminal                 bool
	CreateTime, UpdateTime   time.Time
}

// Summaries reads the orders of ids that exist, in no particular order.
func (s *Store) Summaries(ctx context.Context, ids []string) ([]Summary, error) {
	rows, err := s.q.OrderSummaries(ctx, s.cfg.DB, ids)
	if err != nil {
		return nil, fmt.Errorf("read orders: %w", err)
	}
	out := make([]Summary, len(rows))
	for i, r := range rows {
		out[i] = Summary(r)
	}
	return out, nil
}

// CreatedAfter reads the next limit live orders of serviceTypes created
// after (afterTime, afterID), in creation order.
func (s *Store) CreatedAfter(ctx context.Context, serviceTypes []string, afterTime time.Time, afterID string,
	limit int) ([]Summary, error) {
	rows, err := s.q.OrderSummariesCreatedAfter(ctx, s.cfg.DB, OrderSummariesCreatedAfterParams{
		ServiceTypes: serviceTypes, AfterTime: afterTime, AfterID: afterID, Limit: int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("read orders created after %s: %w", afterTime, err)
	}
	out := make([]Summary, len(rows))
	for i, r := range rows {
		out[i] = Summary(r)
	}
	return out, nil
}

// ExistingTx returns those of ids that name an order, in tx.
func (s *Store) ExistingTx(ctx context.Context, tx *store.Tx, ids []string) (map[string]bool, error) {
	found, err := s.q.OrdersExisting(ctx, tx, ids)
	if err != nil {
		return nil, fmt.Errorf("look up orders: %w", err)
	}
	out := make(map[string]bool, len(found))
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}
