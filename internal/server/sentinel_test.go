package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/events"
	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/sentinel"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// The in-process sentinel publishes a reconcile CloudEvent on
// steward.reconcile.<service_type> for a new order of a type with required
// adapters, and another when a DELETE bumps its generation; it publishes
// none for orders of types nothing waits for.
func TestSentinel_PublishesReconcileEventsThroughJetStream(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, apitest.Fast, func(c *server.Config) {
			c.SentinelInterval, c.SentinelDebounce = 50*time.Millisecond, time.Hour
		})
		p := providertest.New(t)
		s.Do(t, "POST", "/api/v1/service-types?id=app", map[string]any{
			"lifecycle": "simple", "required_adapters": []string{"ns"},
			"schema": map[string]any{"type": "object", "properties": map[string]any{"replicas": map[string]any{"type": "integer"}}},
		}).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/providers", p.Registration("app-sp", "app", "vm")).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/catalog-items?id=app", map[string]any{"service_type": "app", "defaults": map[string]any{"replicas": 1}}).
			Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/catalog-items?id=vm", map[string]any{"service_type": "vm", "defaults": map[string]any{
			"vcpu": map[string]any{"count": 1}, "memory": map[string]any{"size": "1GB"}, "guest_os": map[string]any{"type": "fedora-39"}}}).
			Want(t, http.StatusCreated)

		got := make(chan events.Event, 16)
		stop, err := s.Bus().Subscribe(context.Background(), events.SubscribeParams{
			Subject: "steward.reconcile.>", Durable: "test-adapter",
			Handler: func(_ context.Context, ev events.Event) error { got <- ev; return nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		next := func(what string) sentinel.EventData {
			t.Helper()
			select {
			case ev := <-got:
				var d sentinel.EventData
				if err := ev.DataAs(&d); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if ev.Type() != sentinel.Subject(d.ServiceType) || ev.Subject() != d.ID {
					t.Errorf("%s: event type %s, subject %s for %+v", what, ev.Type(), ev.Subject(), d)
				}
				return d
			case <-deadline(t):
				t.Fatalf("no reconcile event: %s", what)
			}
			return sentinel.EventData{}
		}

		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=v1", map[string]any{"catalog_item_id": "vm"}).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=a1", map[string]any{"catalog_item_id": "app"}).Want(t, http.StatusCreated)
		d := next("a new order")
		if d.ID != "a1" || d.Reason != sentinel.ReasonNew || d.Generation != 1 || d.Href != "/api/v1/catalog-item-instances/a1" ||
			d.Project != "default" || d.DeletedAt != nil {
			t.Errorf("new order's event = %+v", d)
		}

		s.Do(t, "DELETE", "/api/v1/catalog-item-instances/a1", nil).Want(t, http.StatusAccepted)
		d = next("a deleted order")
		if d.ID != "a1" || d.Reason != sentinel.ReasonGenerationChanged || d.Generation != 2 || d.DeletedAt == nil {
			t.Errorf("deleted order's event = %+v", d)
		}
		select {
		case ev := <-got:
			t.Errorf("unexpected event %s", ev)
		default:
		}
	})
}
