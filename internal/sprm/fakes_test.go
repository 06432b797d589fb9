package sprm

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// testClock is a clock that moves only when the test moves it, so timing
// (health schedule, backoff, claim expiry, grace periods) is driven, not
// waited for. It is safe for concurrent use.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock {
	return &testClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// errUnreachable is what fakeProviders answers while down.
var errUnreachable = errors.New("fake provider: connection refused")

// fakeProviders is the provider client: it answers health checks and
// deletes as the test sets it, and counts them. It is safe for concurrent use.
type fakeProviders struct {
	clock *testClock

	mu sync.Mutex
	// down makes every call fail as if the provider were unreachable.
	down bool
	// latency is how far a health check moves the clock.
	latency time.Duration
	// duringHealth, when set, runs inside the next health check, before it
	// answers (then it is cleared).
	duringHealth func()
	healthChecks int
	deletes      int
	// missing holds the ids Get answers 404 for; gets counts Get calls.
	missing map[string]bool
	gets    map[string]int
}

func (f *fakeProviders) set(down bool, latency time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down, f.latency = down, latency
}

func (f *fakeProviders) counts() (healthChecks, deletes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.healthChecks, f.deletes
}

func (f *fakeProviders) Create(context.Context, string, provider.CreateRequest) (provider.Instance, error) {
	return provider.Instance{}, errors.New("fake provider: Create is not used by these tests")
}

// Get answers PROVISIONING, or 404 for an id in missing, and counts the
// calls by id.
func (f *fakeProviders) Get(_ context.Context, _, id string) (provider.Instance, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gets == nil {
		f.gets = map[string]int{}
	}
	f.gets[id]++
	switch {
	case f.down:
		return provider.Instance{}, errUnreachable
	case f.missing[id]:
		return provider.Instance{}, provider.ErrNotFound
	}
	return provider.Instance{InstanceID: id, Status: provider.StatusProvisioning}, nil
}

// getCounts returns the Get calls so far, by instance id.
func (f *fakeProviders) getCounts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.gets)
}

func (f *fakeProviders) Update(context.Context, string, provider.UpdateRequest) (provider.Instance, error) {
	return provider.Instance{}, errUnreachable // these tests do not update
}

func (f *fakeProviders) Delete(_ context.Context, _, instanceID string) (provider.Instance, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes++
	if f.down {
		return provider.Instance{}, errUnreachable
	}
	return provider.Instance{InstanceID: instanceID, Status: provider.StatusDeleting}, nil
}

// Validate accepts every spec (no fake registers the validate operation).
func (f *fakeProviders) Validate(context.Context, string, provider.CreateRequest) error { return nil }

// The clock tests' providers export nothing.
func (f *fakeProviders) BeginExport(context.Context, string, string) (provider.ExportGrant, error) {
	return provider.ExportGrant{}, errors.New("fake provider: no export")
}

func (f *fakeProviders) EndExport(context.Context, string, string) error {
	return errors.New("fake provider: no export")
}

func (f *fakeProviders) Health(context.Context, string) (provider.Health, error) {
	f.mu.Lock()
	during := f.duringHealth
	f.duringHealth = nil
	f.mu.Unlock()
	if during != nil {
		during()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.healthChecks++
	f.clock.Advance(f.latency)
	if f.down {
		return provider.Health{}, errUnreachable
	}
	return provider.Health{Status: "healthy"}, nil
}

// noSpecs stands in for the catalog: the flows these tests drive never
// validate a spec (calling it would panic on the nil interface).
type noSpecs struct{ specValidator }

// clocked is a Service on a test clock and a fake provider "vm-sp".
type clocked struct {
	s     *Service
	clock *testClock
	prov  *fakeProviders
}

// setupClocked builds a Service on a fresh database of engine with a test
// clock and registers "vm-sp" (so its first health check is due at once).
// Health checks run every 10s, turn unavailable at 2 failures and back off
// up to 40s, unless adjust changes that.
func setupClocked(t *testing.T, engine store.Engine, adjust func(*Config)) clocked {
	t.Helper()
	clock := newTestClock()
	prov := &fakeProviders{clock: clock}
	cfg := Config{
		DB: storetest.Open(t, engine), Providers: prov, Specs: noSpecs{}, Now: clock.Now,
		Logger:         slog.New(slog.NewTextHandler(t.Output(), nil)),
		HealthInterval: 10 * time.Second, FailureThreshold: 2, MaxHealthBackoff: 40 * time.Second,
	}
	if adjust != nil {
		adjust(&cfg)
	}
	s := New(cfg)
	reg := provider.Registration{Name: "vm-sp", Endpoint: "http://127.0.0.1:1", ServiceTypes: []string{"vm"}}
	if _, _, err := s.Register(context.Background(), "", reg); err != nil {
		t.Fatalf("register vm-sp: %v", err)
	}
	return clocked{s: s, clock: clock, prov: prov}
}

// intent records a PENDING instance of vm-sp, as Create does before it
// calls the provider.
func (c clocked) intent(t *testing.T, id string) {
	t.Helper()
	at := c.s.now()
	if _, err := c.s.q.InstanceInsert(context.Background(), c.s.cfg.DB, InstanceInsertParams{ID: id, Project: "default",
		Name: id, ProviderName: "vm-sp", ServiceType: "vm", Spec: store.JSON(map[string]any{"service_type": "vm"}),
		CreateTime: at, UpdateTime: at}); err != nil {
		t.Fatalf("record intent %s: %v", id, err)
	}
}

// queueCleanup queues the deletion of an instance, as a deferred delete does.
func (c clocked) queueCleanup(t *testing.T, id string) {
	t.Helper()
	if err := c.s.cfg.DB.InTx(t.Context(), func(tx *store.Tx) error { return c.s.CleanupEnqueueTx(t.Context(), tx, id) }); err != nil {
		t.Fatalf("queue cleanup of %s: %v", id, err)
	}
}

// wantDeleted fails the test unless the instance is DELETED.
func (c clocked) wantDeleted(t *testing.T, id string) {
	t.Helper()
	if in, err := c.s.instance(t.Context(), "", id); err != nil || in.Status != provider.StatusDeleted {
		t.Fatalf("instance %s = %+v, %v; want DELETED", id, in, err)
	}
}
