package lifecycle_test

import (
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// withType adds a service type id on the simple lifecycle (one rw+
// attribute, replicas; fields adds to its definition), a provider for it
// and a catalog item of the same id.
func (e *orders) withType(t testing.TB, id string, fields map[string]any) {
	t.Helper()
	def := map[string]any{"lifecycle": "simple", "schema": map[string]any{"type": "object", "properties": map[string]any{
		"replicas": map[string]any{"type": "integer", "x-modifier": "rw+"},
	}}}
	maps.Copy(def, fields)
	e.s.Do(t, "POST", "/api/v1/service-types?id="+id, def).Want(t, http.StatusCreated)
	e.s.Do(t, "POST", "/api/v1/providers", e.p.Registration(id+"-sp", id)).Want(t, http.StatusCreated)
	e.s.Do(t, "POST", "/api/v1/catalog-items?id="+id, map[string]any{
		"service_type": id, "defaults": map[string]any{"replicas": 1},
	}).Want(t, http.StatusCreated)
}

// withPools adds a service type "pool" that nests in a vm order
// (parent_service_type vm, on_parent_delete as given) with its provider
// and catalog item "pool".
func (e *orders) withPools(t testing.TB, onParentDelete string) {
	t.Helper()
	e.withType(t, "pool", map[string]any{"parent_service_type": "vm", "on_parent_delete": onParentDelete})
}

// pool creates a pool order under parent and brings it up.
func (e *orders) pool(t testing.TB, id, parent string) order {
	t.Helper()
	var o order
	e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, map[string]any{
		"catalog_item_id": "pool", "parent_id": parent,
	}).Want(t, http.StatusCreated).JSON(t, &o)
	e.p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
	e.report(t, o.InstanceID, "RUNNING")
	return e.waitState(t, id, "up")
}

func (e *orders) deleteOrder(t testing.TB, id string) order {
	t.Helper()
	var o order
	e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/"+id, nil).Want(t, http.StatusAccepted).JSON(t, &o)
	return o
}

func readyReason(o order) string {
	for _, c := range o.Conditions {
		if c.Type == "Ready" {
			return c.Status + "/" + c.Reason
		}
	}
	return ""
}

// A child names its parent on create: the parent must be an order of the
// type's parent_service_type, in the project, and not being deleted.
func TestHierarchy_CreateChecksTheParent(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		e.withPools(t, "cascade")
		e.up(t, "cluster", 2)
		create := func(id string, body map[string]any) (int, string) {
			r := e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, body)
			return r.Status, string(r.Body)
		}
		for name, tc := range map[string]struct {
			body   map[string]any
			status int
			says   string
		}{
			"pool without a parent":  {map[string]any{"catalog_item_id": "pool"}, 400, "parent_id"},
			"pool under nothing":     {map[string]any{"catalog_item_id": "pool", "parent_id": "nope"}, 400, `no order \"nope\"`},
			"vm with a parent":       {map[string]any{"catalog_item_id": "small-vm", "parent_id": "cluster"}, 400, "declares no parent_service_type"},
			"pool under its cluster": {map[string]any{"catalog_item_id": "pool", "parent_id": "cluster"}, 201, `"parent_id":"cluster"`},
		} {
			id := strings.ReplaceAll(name, " ", "-")
			if status, body := create(id, tc.body); status != tc.status || !strings.Contains(body, tc.says) {
				t.Errorf("%s: %d %s; want %d saying %s", name, status, body, tc.status, tc.says)
			}
		}
		// A pool's parent must be a vm, not another pool.
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=nested", map[string]any{
			"catalog_item_id": "pool", "parent_id": "pool-under-its-cluster",
		}).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")

		e.deleteOrder(t, "cluster")
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=late", map[string]any{
			"catalog_item_id": "pool", "parent_id": "cluster",
		}).WantProblem(t, http.StatusConflict, "PARENT_DELETING")
		if r := e.s.Do(t, "GET", "/api/v1/catalog-item-instances/late", nil); r.Status != http.StatusNotFound {
			t.Errorf("a refused child was stored: GET answers %d", r.Status)
		}
	})
}

// DELETE marks the order and every descendant in one transaction with the
// same deleted_at, bumps each generation and says Deleting; the records
// stay readable and listable, further changes are refused, repeating the
// DELETE changes nothing, and children are removed before their parent.
func TestDeletion_CascadesToDescendants(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		e.withPools(t, "cascade")
		e.up(t, "cluster", 2)
		p1, p2 := e.pool(t, "p1", "cluster"), e.pool(t, "p2", "cluster")
		// An adapter works on each child: its confirmation holds the child
		// in deletion while it is looked at.
		for _, id := range []string{"p1", "p2"} {
			e.putReport(t, id, "k8s", adapterReport(1, time.Now(), "True", "True"), http.StatusOK)
		}

		parent := e.deleteOrder(t, "cluster")
		if parent.DeletedAt == nil || parent.Generation != 2 || readyReason(parent) != "False/Deleting" {
			t.Fatalf("deleted parent: deleted_at %v, generation %d, Ready %s", parent.DeletedAt, parent.Generation,
				readyReason(parent))
		}
		for _, before := range []order{p1, p2} {
			c := e.get(t, before.ID)
			if c.DeletedAt == nil || !c.DeletedAt.Equal(*parent.DeletedAt) || c.Generation != before.Generation+1 ||
				readyReason(c) != "False/Deleting" || c.State != "deleting" {
				t.Errorf("child %s: deleted_at %v (parent %v), generation %d (was %d), Ready %s, state %s",
					c.ID, c.DeletedAt, parent.DeletedAt, c.Generation, before.Generation, readyReason(c), c.State)
			}
		}
		var list struct{ Results []order }
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances?parent_id=cluster", nil).Want(t, http.StatusOK).JSON(t, &list)
		if len(list.Results) != 2 {
			t.Errorf("children listed while being deleted: %d, want 2", len(list.Results))
		}
		e.s.Do(t, "PATCH", "/api/v1/catalog-item-instances/p1", edit("replicas", 3)).
			WantProblem(t, http.StatusConflict, "DELETING")
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances/p1:rehydrate", nil).
			WantProblem(t, http.StatusConflict, "DELETING")
		if r := e.setState(t, "p1", "up", e.get(t, "p1").Version); r.Status != http.StatusConflict {
			t.Errorf(":setState up of a deleting order: %d %s, want 409", r.Status, r.Body)
		}
		again := e.deleteOrder(t, "cluster")
		if again.Version != parent.Version || again.Generation != parent.Generation {
			t.Errorf("a repeated DELETE changed the order: version %d→%d, generation %d→%d",
				parent.Version, again.Version, parent.Generation, again.Generation)
		}

		// Every resource is deleted; the parent still waits for its
		// children, which wait for their adapter.
		for _, id := range []string{p1.InstanceID, p2.InstanceID, parent.InstanceID} {
			e.p.WaitForCall(t, providertest.MethodDelete, id)
		}
		poll.Until(t, "the parent's resource is gone", func() bool { return e.get(t, "cluster").Status == "DELETED" })
		if c := e.get(t, "cluster"); c.State != "deleting" || !strings.Contains(readyMessage(c), "child orders to be removed first") {
			t.Fatalf("parent with children left: state %s, Ready message %q", c.State, readyMessage(c))
		}
		e.putReport(t, "p1", "k8s", adapterReport(2, time.Now(), "False", "True"), http.StatusOK)
		e.waitState(t, "p1", "terminated")
		if c := e.get(t, "cluster"); c.State != "deleting" {
			t.Fatalf("parent removed with a child left: state %s", c.State)
		}
		e.putReport(t, "p2", "k8s", adapterReport(2, time.Now(), "False", "True"), http.StatusOK)
		e.waitState(t, "p2", "terminated")
		e.waitState(t, "cluster", "terminated")
	})
}

// A child whose type says on_parent_delete: restrict refuses its parent's
// DELETE while it is not being deleted itself; nothing changes then.
func TestDeletion_RestrictRefusesWhileChildrenLive(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		e.withPools(t, "restrict")
		before := e.up(t, "cluster", 2)
		e.pool(t, "p1", "cluster")

		r := e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/cluster", nil)
		r.WantProblem(t, http.StatusConflict, "CHILDREN_EXIST")
		if !strings.Contains(string(r.Body), `"children":["p1"]`) {
			t.Errorf("problem does not name the child: %s", r.Body)
		}
		if got := e.get(t, "cluster"); got.DeletedAt != nil || got.Version != before.Version || got.State != "up" {
			t.Fatalf("refused DELETE changed the parent: %+v", got)
		}
		if got := e.get(t, "p1"); got.DeletedAt != nil {
			t.Fatalf("refused DELETE marked the child")
		}

		e.deleteOrder(t, "p1")
		e.deleteOrder(t, "cluster")
		e.waitState(t, "p1", "terminated")
		e.waitState(t, "cluster", "terminated")
	})
}

// A removed order is a tombstone (AIP-164): GET answers 200 with
// deleted_at, its terminal state and expire_time; lists leave it out
// unless show_deleted=true; its id is taken (409 naming expire_time) until
// the purge, after which it is gone and free.
func TestDeletion_TombstoneUntilPurged(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		const retention = 2 * time.Second
		e := setupOrders(t, engine, false, func(c *server.Config) { c.TombstoneRetention = retention })
		o := e.up(t, "web", 2)
		e.deleteOrder(t, "web")
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		gone := e.waitState(t, "web", "terminated")
		if gone.DeletedAt == nil || gone.ExpireTime == nil ||
			gone.ExpireTime.Sub(gone.UpdateTime) < retention-time.Second ||
			gone.ExpireTime.Sub(gone.UpdateTime) > retention+time.Second {
			t.Fatalf("tombstone: deleted_at %v, expire_time %v, removed at %v; want expire_time %v after removal",
				gone.DeletedAt, gone.ExpireTime, gone.UpdateTime, retention)
		}
		count := func(query string) int {
			var list struct{ Results []order }
			e.s.Do(t, "GET", "/api/v1/catalog-item-instances"+query, nil).Want(t, http.StatusOK).JSON(t, &list)
			return len(list.Results)
		}
		if n := count(""); n != 0 {
			t.Errorf("list shows %d orders, want the tombstone left out", n)
		}
		if n := count("?show_deleted=true"); n != 1 {
			t.Errorf("list with show_deleted shows %d orders, want the tombstone", n)
		}
		r := e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=web", map[string]any{"catalog_item_id": "small-vm"})
		r.WantProblem(t, http.StatusConflict, "ORDER_EXISTS")
		if !strings.Contains(string(r.Body), `"expire_time"`) {
			t.Errorf("409 on a tombstone's id does not give expire_time: %s", r.Body)
		}

		// The purge leaves it until its expire_time, then deletes it.
		if n, err := e.s.Lifecycle().PurgeTombstones(t.Context()); err != nil || n != 0 {
			t.Fatalf("purge before expire_time: %d, %v; want 0", n, err)
		}
		// The server's periodic purge may get there before this call does;
		// either way the tombstone must be gone.
		poll.Until(t, "the tombstone is purged after its expire_time", func() bool {
			if _, err := e.s.Lifecycle().PurgeTombstones(t.Context()); err != nil {
				t.Fatal(err)
			}
			return count("?show_deleted=true") == 0
		})
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances/web", nil).WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances/web/events", nil).WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")
		e.create(t, "web", 2)
	})
}

// :forceDelete removes an order being deleted, and its descendants, without
// waiting for its gate, recording who and why; it refuses a live order and
// an empty reason.
func TestForceDelete(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		e.withPools(t, "cascade")
		o := e.up(t, "cluster", 2)
		e.pool(t, "p1", "cluster")
		url := "/api/v1/catalog-item-instances/cluster:forceDelete"
		e.s.Do(t, "POST", url, map[string]any{"reason": "gone"}).WantProblem(t, http.StatusConflict, "NOT_DELETING")
		e.s.Do(t, "POST", url, map[string]any{"reason": " "}).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances/nope:forceDelete", map[string]any{"reason": "x"}).
			WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")

		// An adapter that will never confirm holds the deletion.
		e.putReport(t, "cluster", "dns", adapterReport(1, time.Now(), "True", "True"), http.StatusOK)
		e.putReport(t, "p1", "dns", adapterReport(1, time.Now(), "True", "True"), http.StatusOK)
		e.deleteOrder(t, "cluster")
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		poll.Until(t, "the cluster waits at its gate", func() bool {
			c := e.get(t, "cluster")
			return c.Status == "DELETED" && c.State == "deleting"
		})

		e.s.Do(t, "POST", url, map[string]any{"reason": "dns adapter decommissioned"}).Want(t, http.StatusNoContent)
		for _, id := range []string{"cluster", "p1"} {
			got := e.get(t, id)
			evs := e.events(t, id)
			last := evs[len(evs)-1]
			if got.State != "terminated" || got.ExpireTime == nil || last.Trigger != "force_delete" ||
				!strings.Contains(last.Error, "dns adapter decommissioned") || !strings.Contains(last.Error, "user:dev") {
				t.Errorf("%s after force delete: state %s, expire_time %v, last event %+v", id, got.State,
					got.ExpireTime, last)
			}
		}
		e.s.Do(t, "POST", url, map[string]any{"reason": "again"}).Want(t, http.StatusNoContent)
	})
}

// A deletion held at its gate past the stuck threshold says DeletionStuck,
// and the stuck-deletion metrics count it and the adapter holding it.
func TestDeletion_StuckReason(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false, func(c *server.Config) { c.DeletionStuckAfter = time.Millisecond })
		o := e.up(t, "web", 2)
		e.putReport(t, "web", "dns", adapterReport(1, time.Now(), "True", "True"), http.StatusOK)
		e.deleteOrder(t, "web")
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		poll.Until(t, "the held deletion says it is stuck", func() bool {
			return readyReason(e.get(t, "web")) == "False/DeletionStuck"
		})
		metrics := string(e.s.Do(t, "GET", "/metrics", nil).Want(t, http.StatusOK).Body)
		for _, want := range []string{
			"steward_order_deletions_stuck 1\n",
			`steward_order_deletions_held_by_adapter{adapter="dns"} 1` + "\n",
			`steward_order_deletions_in_progress{age="under_1m"} 1` + "\n",
		} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
			}
		}
		// Once the adapter confirms, nothing is in deletion any more.
		e.putReport(t, "web", "dns", adapterReport(2, time.Now(), "False", "True"), http.StatusOK)
		e.waitState(t, "web", "terminated")
		metrics = string(e.s.Do(t, "GET", "/metrics", nil).Want(t, http.StatusOK).Body)
		if !strings.Contains(metrics, "steward_order_deletions_stuck 0\n") || strings.Contains(metrics, "held_by_adapter{") {
			t.Errorf("after the removal /metrics still counts a stuck deletion")
		}
	})
}

// Lists filter by labels in both forms: label=k:v and labels.k=v.
func TestOrders_ListByLabels(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		for id, env := range map[string]string{"a": "prod", "b": "dev"} {
			e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, map[string]any{
				"catalog_item_id": "small-vm", "labels": map[string]any{"env": env, "team": "x"},
			}).Want(t, http.StatusCreated)
		}
		for query, want := range map[string]string{
			"?label=env:prod":                "a",
			"?labels.env=dev":                "b",
			"?labels.env=prod&label=team:x":  "a",
			"?labels.team=x&labels.env=nope": "",
		} {
			var list struct{ Results []order }
			e.s.Do(t, "GET", "/api/v1/catalog-item-instances"+query, nil).Want(t, http.StatusOK).JSON(t, &list)
			var got []string
			for _, o := range list.Results {
				got = append(got, o.ID)
			}
			if strings.Join(got, ",") != want {
				t.Errorf("%s lists %v, want %q", query, got, want)
			}
		}
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances?labels.env=prod&label=env:dev", nil).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
	})
}

// The tombstone purge runs as a periodic job on its own (at the leader's
// start, then every TombstonePurgeInterval): a tombstone past its
// expire_time goes without anyone calling the purge. (Not through a
// restart: a periodic job is unique per period, so a leader that restarts
// within the period does not run it again.)
func TestDeletion_PeriodicPurgeRemovesExpiredTombstones(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false, func(c *server.Config) {
			c.TombstoneRetention, c.TombstonePurgeInterval = time.Millisecond, 200*time.Millisecond
		})
		o := e.up(t, "web", 2)
		e.deleteOrder(t, "web")
		e.p.WaitForCall(t, providertest.MethodDelete, o.InstanceID)
		// A terminated order stays readable as a tombstone (200) until the
		// purge removes it: 404 means the periodic job ran.
		poll.Until(t, "the periodic purge removed the tombstone", func() bool {
			return e.s.Do(t, "GET", "/api/v1/catalog-item-instances/web", nil).Status == http.StatusNotFound
		})
	})
}
