package lifecycle_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// gated is a lifecycle in compact form with an approval gate that
// validates: an order waits in "designed" until someone approves it.
const gated = `{"initial_state": "start",
  "states": {"start": "candidate", "designed": "designed", "creating": "active export",
             "up": "active export success", "failed": "active export danger",
             "rejected": "inactive deleted danger", "deleting": "active purge", "terminated": "inactive deleted"},
  "transfers": ["start -> designed: auto validate | rejected",
                "designed -> creating: api validate promote | rejected",
                "creating, up, failed -> up: resource | failed",
                "rejected -> terminated: on_delete",
                "deleting -> terminated: resource"],
  "on_delete": "deleting"}`

// gatedEnv is a server with the gated lifecycle, a service type "cache"
// that follows it, a provider for it and a catalog item.
func gatedEnv(t *testing.T, engine store.Engine, adjust ...func(*server.Config)) (*apitest.Server, *providertest.Server) {
	t.Helper()
	s := apitest.Start(t, engine, append([]func(*server.Config){apitest.Fast}, adjust...)...)
	s.Do(t, "POST", "/api/v1/lifecycles?id=gated", []byte(`{"compact": `+gated+`}`)).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/service-types?id=cache", map[string]any{
		"lifecycle": "gated",
		"schema": map[string]any{"type": "object", "required": []any{"name", "size"}, "properties": map[string]any{
			"name": map[string]any{"type": "string"},
			"size": map[string]any{"enum": []any{"small", "large"}, "x-modifier": "rw+"},
		}},
		"identity_attribute": "name",
	}).Want(t, http.StatusCreated)
	p := providertest.New(t)
	s.Do(t, "POST", "/api/v1/providers", p.Registration("cache-sp", "cache")).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-items?id=cache", map[string]any{
		"service_type": "cache", "defaults": map[string]any{"size": "small"},
		"fields": []any{map[string]any{"path": "name", "editable": true}, map[string]any{"path": "size", "editable": true}},
	}).Want(t, http.StatusCreated)
	return s, p
}

func orderCache(t *testing.T, s *apitest.Server, name, size string) order {
	t.Helper()
	var o order
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+name, map[string]any{"catalog_item_id": "cache",
		"user_values": []any{map[string]any{"path": "name", "value": name}, map[string]any{"path": "size", "value": size}},
	}).Want(t, http.StatusCreated).JSON(t, &o)
	return o
}

// A lifecycle written in compact form drives orders of a user-defined type:
// approval, realisation, a refusal at the gate, deletion.
func TestOrders_CustomCompactLifecycle(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s, p := gatedEnv(t, engine)
		e := &orders{s, p}
		o := orderCache(t, s, "sessions", "small")
		if o.Lifecycle != "gated" || o.State != "designed" || o.InstanceID != "" || o.Attributes.Candidate == nil {
			t.Fatalf("created = %+v: want it waiting in designed, unrealised", o)
		}
		// The identity names the order in place of its id.
		var byIdentity order
		s.Do(t, "GET", "/api/v1/catalog-item-instances/cache.name=sessions", nil).Want(t, http.StatusOK).JSON(t, &byIdentity)
		if byIdentity.ID != "sessions" {
			t.Errorf("by identity: %+v", byIdentity)
		}
		s.Do(t, "GET", "/api/v1/catalog-item-instances/cache.size=small", nil).WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")

		// Approval validates, promotes and realises.
		e.setState(t, "sessions", "creating", o.Version).Want(t, http.StatusOK)
		creating := e.waitState(t, "sessions", "creating")
		p.WaitForCall(t, providertest.MethodCreate, creating.InstanceID)
		e.report(t, creating.InstanceID, "RUNNING")
		e.waitState(t, "sessions", "up")

		// A refusal at the gate: the policy chain rejects the approval.
		big := orderCache(t, s, "big", "large")
		s.Do(t, "POST", "/api/v1/policies?id=no-large", map[string]any{
			"display_name": "no-large", "policy_type": "GLOBAL", "priority": 5,
			"rego_code": "package steward.nolarge\n\nmain := {\"rejected\": true, \"rejection_reason\": \"no large caches\"} if {\n\tinput.spec.size == \"large\"\n} else := {}\n",
		}).Want(t, http.StatusCreated)
		e.setState(t, "big", "creating", big.Version).Want(t, http.StatusOK)
		rejected := e.waitState(t, "big", "rejected")
		if !strings.Contains(rejected.LastError, "no large caches") || rejected.InstanceID != "" ||
			rejected.Conditions[0].Reason != "Rejected" {
			t.Errorf("rejected = %+v", rejected)
		}
		// A rejected order is not live: the item can go once the live one does.
		s.Do(t, "DELETE", "/api/v1/catalog-items/cache", nil).WantProblem(t, http.StatusConflict, "CATALOG_ITEM_IN_USE")
		s.Do(t, "DELETE", "/api/v1/catalog-item-instances/sessions", nil).Want(t, http.StatusAccepted)
		p.WaitForCall(t, providertest.MethodDelete, creating.InstanceID)
		e.waitState(t, "sessions", "terminated")
		s.Do(t, "DELETE", "/api/v1/catalog-items/cache", nil).Want(t, http.StatusNoContent)

		want := []string{">start", "start>designed", "designed>creating", "creating>up", "up>up", "up>deleting",
			"deleting>terminated"}
		if got := path(e.events(t, "sessions")); !slices.Equal(got, want) {
			t.Errorf("events %v, want %v", got, want)
		}
	})
}

// Work a transfer queued when the server stops is done when it starts
// again: the provisioning job was written in the transfer's transaction.
func TestOrders_QueuedWorkSurvivesRestart(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s, p := gatedEnv(t, engine)
		o := orderCache(t, s, "c1", "small")
		s = s.Restart(t, func(c *server.Config) { c.PauseJobs = true })
		e := &orders{s, p}
		// The approval validates in the request and promotes; realising it
		// is queued, and with the jobs paused nothing reaches the provider.
		e.setState(t, "c1", "creating", o.Version).Want(t, http.StatusOK)
		creating := e.get(t, "c1")
		if creating.State != "creating" || creating.InstanceID == "" || len(p.Creates()) != 0 {
			t.Fatalf("with jobs paused: %+v, %d creates", creating, len(p.Creates()))
		}
		s = s.Restart(t, func(c *server.Config) { c.PauseJobs = false })
		e = &orders{s, p}
		p.WaitForCall(t, providertest.MethodCreate, creating.InstanceID)
		e.report(t, creating.InstanceID, "RUNNING")
		e.waitState(t, "c1", "up")
	})
}

// LSM's service lifecycle validates twice before it realises: the first
// validation runs in the create request, the second (acknowledged →
// designed) as a job written in the create's transaction. Stopped before
// that job ran, the server takes it up when it starts again.
func TestOrders_ServiceLifecycle_QueuedValidationSurvivesRestart(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, apitest.Fast, func(c *server.Config) { c.PauseJobs = true })
		s.Do(t, "POST", "/api/v1/service-types?id=db", map[string]any{"lifecycle": "service",
			"schema": map[string]any{"type": "object", "properties": map[string]any{"size": map[string]any{"type": "string"}}}},
		).Want(t, http.StatusCreated)
		p := providertest.New(t)
		s.Do(t, "POST", "/api/v1/providers", p.Registration("db-sp", "db")).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/catalog-items?id=db", map[string]any{"service_type": "db",
			"defaults": map[string]any{"size": "s"}}).Want(t, http.StatusCreated)
		var o order
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=pg", map[string]any{"catalog_item_id": "db"}).
			Want(t, http.StatusCreated).JSON(t, &o)
		if o.Lifecycle != "service" || o.State != "acknowledged" {
			t.Fatalf("created = %+v: want acknowledged, its next validation queued", o)
		}
		s = s.Restart(t, func(c *server.Config) { c.PauseJobs = false })
		e := &orders{s, p}
		creating := e.waitState(t, "pg", "creating")
		p.WaitForCall(t, providertest.MethodCreate, creating.InstanceID)
		e.report(t, creating.InstanceID, "RUNNING")
		e.waitState(t, "pg", "up")
		want := []string{">start", "start>acknowledged", "acknowledged>designed", "designed>creating", "creating>up"}
		if got := path(e.events(t, "pg")); !slices.Equal(got, want) {
			t.Errorf("events %v, want %v", got, want)
		}
	})
}
