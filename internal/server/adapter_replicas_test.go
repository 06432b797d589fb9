package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/adapter"
	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// memAdapter is an adapter config with one ConfigMap per order of type app.
const memAdapter = `
adapter: {name: mem}
service_types: [app]
params:
  - {name: orderId, source: event.id, required: true}
  - {name: ns, source: env.MEM_NAMESPACE, default: default}
resources:
  - name: cm
    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: "o-{{ .orderId | lower }}", namespace: "{{ .ns }}"}}
    discovery: {namespace: "{{ .ns }}", by_name: "o-{{ .orderId | lower }}"}
`

// setupApp sets up service type app requiring adapter mem, with a provider
// and a catalog item.
func setupApp(tb testing.TB, s *apitest.Server) *providertest.Server {
	tb.Helper()
	return typeWithAdapter(tb, s, "app", "mem")
}

// typeWithAdapter defines a service type that requires an adapter, with a
// provider of it (typ+"-sp") and a catalog item of the same id.
func typeWithAdapter(tb testing.TB, s *apitest.Server, typ, adapterName string) *providertest.Server {
	tb.Helper()
	p := providertest.New(tb)
	s.Do(tb, "POST", "/api/v1/service-types?id="+typ, map[string]any{
		"lifecycle": "simple", "required_adapters": []string{adapterName}, "schema": map[string]any{"type": "object"},
	}).Want(tb, http.StatusCreated)
	s.Do(tb, "POST", "/api/v1/providers", p.Registration(typ+"-sp", typ)).Want(tb, http.StatusCreated)
	s.Do(tb, "POST", "/api/v1/catalog-items?id="+typ, map[string]any{"service_type": typ, "defaults": map[string]any{}}).
		Want(tb, http.StatusCreated)
	return p
}

// appWithAdapter is setupApp, and returns a func that orders an app and
// brings it up (RUNNING).
func appWithAdapter(t *testing.T, s *apitest.Server) func(id string) {
	t.Helper()
	p := setupApp(t, s)
	return func(id string) {
		var o struct {
			InstanceID string `json:"instance_id"`
		}
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, map[string]any{"catalog_item_id": "app"}).
			Want(t, http.StatusCreated).JSON(t, &o)
		poll(t, "the provider got "+id, func() bool {
			s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id, nil).JSON(t, &o)
			return o.InstanceID != ""
		})
		p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
		s.ReportStatus(t, o.InstanceID, "RUNNING")
	}
}

// startReplica starts one replica of the mem adapter on the server's bus;
// env, when set, answers its env.<VAR> params.
func startReplica(t testing.TB, s *apitest.Server, transport adapter.Transport, env ...func(string) (string, bool)) {
	t.Helper()
	cfg, err := adapter.Parse([]byte(memAdapter))
	if err != nil {
		t.Fatal(err)
	}
	deps := adapter.Deps{Transport: transport, API: &adapter.HTTPAPI{BaseURL: s.URL()}}
	if len(env) > 0 {
		deps.Env = env[0]
	}
	exec, err := adapter.NewExecutor(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	c, err := adapter.NewConsumer(adapter.ConsumerConfig{Executor: exec, Bus: s.Bus(),
		Backoff: func(uint64) time.Duration { return 50 * time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
}

// Two replicas of an adapter share its durable consumer: every order's
// event is applied once, by one of them, and each order goes Ready; an
// event whose reconcile fails before its report (a transient Kubernetes
// error) is not acknowledged and comes back after the backoff, and the
// order goes Ready then.
func TestAdapter_ReplicasShareEventsAndAFailedOneComesBack(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, apitest.Fast, func(c *server.Config) {
			// One event per order: the sentinel would publish again only
			// after an hour or on a change.
			c.SentinelInterval, c.SentinelDebounce = 50*time.Millisecond, time.Hour
		})
		order := appWithAdapter(t, s)

		var mu sync.Mutex
		applies := map[string]int{}
		failed := false
		hook := func(op, _, name string) error {
			if op != "apply" {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			applies[name]++
			if name == "o-flaky" && !failed {
				failed = true
				return adapter.Transient(fmt.Errorf("the API server answered 503"))
			}
			return nil
		}
		for range 2 {
			tr := adapter.NewMemoryTransport()
			tr.Hook = hook
			startReplica(t, s, tr)
		}

		ids := []string{"flaky"}
		for i := range 8 {
			ids = append(ids, fmt.Sprintf("a%d", i))
		}
		for _, id := range ids {
			order(id)
		}
		for _, id := range ids {
			poll(t, id+" is Ready", func() bool {
				var o struct {
					Conditions []struct{ Type, Status string }
				}
				s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id, nil).JSON(t, &o)
				return len(o.Conditions) > 0 && o.Conditions[0].Type == "Ready" && o.Conditions[0].Status == "True"
			})
		}
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			want := 1
			if id == "flaky" {
				want = 2 // failed once, then again after the backoff
			}
			if n := applies["o-"+strings.ToLower(id)]; n != want {
				t.Errorf("%s applied %d times, want %d", id, n, want)
			}
		}
	})
}
