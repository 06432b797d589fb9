package order_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// fixture is a store with orders written as the lifecycle writes them.
type fixture struct {
	db     *store.DB
	orders *order.Store
	t0     time.Time
}

// types: "cache" orders are identified by their name and run a simple
// runtime; "vm" orders have neither.
func newFixture(t *testing.T, engine store.Engine) *fixture {
	db := storetest.Open(t, engine)
	types := map[string]order.ServiceType{"cache": {IdentityAttribute: "name", RuntimeKind: "simple"}, "vm": {}}
	return &fixture{db: db, t0: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		orders: order.New(order.Config{DB: db, ServiceType: func(_ context.Context, name string) (order.ServiceType, error) {
			st, ok := types[name]
			if !ok {
				return order.ServiceType{}, fmt.Errorf("no service type %q", name)
			}
			return st, nil
		}})}
}

// row is an order as inserted.
type row struct {
	id, project, item, serviceType, identity, attributes string
	created                                              int // seconds after t0
	deleted, terminal                                    bool
}

func (f *fixture) insert(t *testing.T, r row) {
	t.Helper()
	r.project = cmpOr(r.project, "p1")
	r.item = cmpOr(r.item, "item")
	r.attributes = cmpOr(r.attributes, "{}")
	at := f.t0.Add(time.Duration(r.created) * time.Second)
	var deletedAt *time.Time
	if r.deleted {
		deletedAt = &at
	}
	var identity *string
	if r.identity != "" {
		identity = &r.identity
	}
	q := `INSERT INTO catalog_item_instances (id, project, catalog_item_id, service_type, display_name, labels,
		user_values, state, lifecycle, version, generation, attributes, instance_id, provider_name, status,
		create_time, update_time, deleted_at, terminal, identity)
		VALUES (?, ?, ?, ?, '', '{}', '[]', 'up', 'simple', 1, 3, ?, 'i-' || ?, 'sp', 'RUNNING', ?, ?, ?, ?, ?)`
	if f.db.Engine() == store.Postgres {
		n := 0
		q = rebind(q, &n)
	}
	if _, err := f.db.Exec(context.Background(), q, r.id, r.project, r.item, r.serviceType, r.attributes, r.id, at, at,
		deletedAt, r.terminal, identity); err != nil {
		t.Fatalf("insert %s: %v", r.id, err)
	}
}

func rebind(q string, n *int) string {
	var b strings.Builder
	for _, c := range q {
		if c == '?' {
			*n++
			fmt.Fprintf(&b, "$%d", *n)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func TestResolve_TakesAnIDOrAnIdentity(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		f := newFixture(t, engine)
		f.insert(t, row{id: "c1", serviceType: "cache", identity: "sessions"})
		f.insert(t, row{id: "c2", serviceType: "cache", identity: "gone", deleted: true})
		ctx := context.Background()
		for ref, want := range map[string]string{"c1": "c1", "unknown-id": "unknown-id", "cache.name=sessions": "c1"} {
			if got, err := f.orders.Resolve(ctx, "p1", ref); err != nil || got != want {
				t.Errorf("Resolve(%q) = %q, %v; want %q", ref, got, err, want)
			}
		}
		if _, err := f.orders.Resolve(ctx, "p2", "cache.name=sessions"); !errors.Is(err, order.ErrNotFound) {
			t.Errorf("Resolve of another project's identity = %v, want ErrNotFound", err)
		}
		for _, ref := range []string{"cache.name=nobody", "cache.name=gone", "cache.size=sessions", "vm.name=x",
			"nosuch.name=x", "name=x"} {
			if _, err := f.orders.Resolve(ctx, "p1", ref); !errors.Is(err, order.ErrNotFound) {
				t.Errorf("Resolve(%q) = %v, want ErrNotFound", ref, err)
			}
		}
	})
}

func TestLockFacts_AreTheProjectsOrdersOnly(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		f := newFixture(t, engine)
		f.insert(t, row{id: "live", serviceType: "vm"})
		f.insert(t, row{id: "deleting", serviceType: "vm", deleted: true})
		f.insert(t, row{id: "removed", serviceType: "vm", deleted: true, terminal: true})
		ctx := context.Background()
		err := f.db.InTx(ctx, func(tx *store.Tx) error {
			for id, deleting := range map[string]bool{"live": false, "deleting": true, "removed": false} {
				got, err := f.orders.LockTx(ctx, tx, "p1", id)
				if err != nil || got.Generation != 3 || got.Deleting() != deleting {
					t.Errorf("LockTx(%s) = %+v (deleting %v), %v; want generation 3, deleting %v", id, got,
						got.Deleting(), err, deleting)
				}
			}
			for project, id := range map[string]string{"p2": "live", "p1": "missing"} {
				if _, err := f.orders.LockTx(ctx, tx, project, id); !errors.Is(err, order.ErrNotFound) {
					t.Errorf("LockTx(%s, %s) = %v, want ErrNotFound", project, id, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := f.orders.Facts(ctx, "p1", "removed"); err != nil || !got.Terminal || got.DeletedAt == nil {
			t.Errorf("Facts(removed) = %+v, %v", got, err)
		}
		if _, err := f.orders.Facts(ctx, "p2", "live"); !errors.Is(err, order.ErrNotFound) {
			t.Errorf("Facts of another project's order = %v, want ErrNotFound", err)
		}
	})
}

func TestLive_CountsAndSetsLeaveTheRemovedOut(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		f := newFixture(t, engine)
		f.insert(t, row{id: "a", item: "small", serviceType: "vm",
			attributes: `{"candidate": {"x": 1}, "active": {"x": 2}, "rollback": null, "requested": {"x": 3}}`})
		f.insert(t, row{id: "b", item: "small", serviceType: "vm", deleted: true})
		f.insert(t, row{id: "c", item: "small", serviceType: "vm", deleted: true, terminal: true})
		f.insert(t, row{id: "d", item: "big", serviceType: "cache"})
		ctx := context.Background()
		err := f.db.InTx(ctx, func(tx *store.Tx) error {
			items, err := f.orders.LiveOfItemTx(ctx, tx, "small")
			if err != nil || items != 2 {
				t.Errorf("LiveOfItemTx = %d, %v; want 2", items, err)
			}
			types, err := f.orders.LiveOfTypeTx(ctx, tx, "vm")
			if err != nil || types != 2 {
				t.Errorf("LiveOfTypeTx = %d, %v; want 2", types, err)
			}
			sets, err := f.orders.LiveAttributesTx(ctx, tx, "vm")
			if err != nil || len(sets) != 2 || len(sets["a"].Sets()) != 3 || len(sets["b"].Sets()) != 0 ||
				sets["a"].Asked()["x"] != 3.0 {
				t.Errorf("LiveAttributesTx = %+v, %v; want a's three sets, b's none", sets, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func TestAppInstance_IsAnOrderWithARuntime(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		f := newFixture(t, engine)
		f.insert(t, row{id: "c1", serviceType: "cache", identity: "sessions", deleted: true})
		f.insert(t, row{id: "v1", serviceType: "vm"})
		ctx := context.Background()
		want := order.AppInstance{ID: "c1", Project: "p1", ServiceType: "cache", RuntimeKind: "simple", InstanceID: "i-c1",
			ProviderName: "sp", State: "up", Deleting: true}
		if got, err := f.orders.AppInstance(ctx, "p1", "c1"); err != nil || got != want {
			t.Errorf("AppInstance(c1) = %+v, %v; want %+v", got, err, want)
		}
		// An identity names live orders only; the id names it still.
		if _, err := f.orders.AppInstance(ctx, "p1", "cache.name=sessions"); !errors.Is(err, order.ErrNotFound) {
			t.Errorf("AppInstance by a deleting order's identity = %v, want ErrNotFound", err)
		}
		if _, err := f.orders.AppInstance(ctx, "p1", "v1"); !errors.Is(err, order.ErrNoRuntime) {
			t.Errorf("AppInstance of a vm = %v, want ErrNoRuntime", err)
		}
		if _, err := f.orders.AppInstance(ctx, "p2", "c1"); !errors.Is(err, order.ErrNotFound) {
			t.Errorf("AppInstance of another project's = %v, want ErrNotFound", err)
		}
	})
}

func TestSummaries_ByIDAndByCreation(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		f := newFixture(t, engine)
		for i := range 6 {
			f.insert(t, row{id: fmt.Sprintf("o%d", i), serviceType: []string{"vm", "cache"}[i%2], created: i, terminal: i == 4})
		}
		ctx := context.Background()
		got, err := f.orders.Summaries(ctx, []string{"o5", "o1", "missing"})
		if err != nil || !slices.Equal(sortedIDs(got), []string{"o1", "o5"}) {
			t.Errorf("Summaries = %v, %v; want o1 and o5", sortedIDs(got), err)
		}
		if len(got) > 0 && (got[0].Generation != 3 || got[0].Project != "p1" || got[0].State != "up" ||
			got[0].Status != "RUNNING" || got[0].CreateTime.IsZero()) {
			t.Errorf("summary %+v", got[0])
		}
		first, err := f.orders.CreatedAfter(ctx, []string{"vm"}, time.Time{}, "", 2)
		if err != nil || !slices.Equal(sortedIDs(first), []string{"o0", "o2"}) {
			t.Fatalf("CreatedAfter = %v, %v; want o0, o2", sortedIDs(first), err)
		}
		last := first[len(first)-1]
		rest, err := f.orders.CreatedAfter(ctx, []string{"vm"}, last.CreateTime, last.ID, 2)
		if err != nil || len(rest) != 0 {
			t.Errorf("CreatedAfter the second page = %v, %v; want none (o4 is removed)", sortedIDs(rest), err)
		}
		both, err := f.orders.CreatedAfter(ctx, []string{"vm", "cache"}, f.t0, "o0", 10)
		if err != nil || !slices.Equal(sortedIDs(both), []string{"o1", "o2", "o3", "o5"}) {
			t.Errorf("CreatedAfter o0 of both types = %v, %v; want o1, o2, o3, o5", sortedIDs(both), err)
		}
		err = f.db.InTx(ctx, func(tx *store.Tx) error {
			exist, err := f.orders.ExistingTx(ctx, tx, []string{"o0", "o4", "missing"})
			if err != nil || len(exist) != 2 || !exist["o0"] || !exist["o4"] {
				t.Errorf("ExistingTx = %v, %v; want o0 and o4", exist, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func sortedIDs(ss []order.Summary) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.ID)
	}
	slices.Sort(out)
	return out
}
