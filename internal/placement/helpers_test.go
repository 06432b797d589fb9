package placement_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

type env struct {
	s *apitest.Server
	p *providertest.Server
}

// setup starts Steward with a provider "vm-sp" for vm and the catalog item
// small-fedora-vm (vcpu.count editable up to 4).
func setup(t *testing.T, engine store.Engine, adjust ...func(*server.Config)) *env {
	t.Helper()
	s := apitest.Start(t, engine, append([]func(*server.Config){apitest.Fast}, adjust...)...)
	p := providertest.New(t)
	s.Do(t, "POST", "/api/v1/providers", p.Registration("vm-sp", "vm")).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-items?id=small-fedora-vm", map[string]any{
		"service_type": "vm",
		"defaults":     map[string]any{"memory": map[string]any{"size": "2GB"}, "guest_os": map[string]any{"type": "fedora-39"}},
		"fields": []any{
			map[string]any{"path": "vcpu.count", "editable": true, "default": 2, "validation_schema": map[string]any{"maximum": 4}},
			map[string]any{"path": "metadata.name", "editable": true},
		},
	}).Want(t, http.StatusCreated)
	return &env{s, p}
}

type order struct {
	ID           string `json:"id"`
	Path         string `json:"path"`
	State        string `json:"state"`
	Status       string `json:"status"`
	InstanceID   string `json:"instance_id"`
	ProviderName string `json:"provider_name"`
	Generation   int    `json:"generation"`
	Version      int    `json:"version"`
	Attributes   struct {
		Candidate map[string]any `json:"candidate"`
		Active    map[string]any `json:"active"`
		Requested map[string]any `json:"requested"`
	} `json:"attributes"`
	Conditions []struct {
		Type   string `json:"type"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"conditions"`
	DeletedAt *time.Time `json:"deleted_at"`
}

type resource struct {
	ID                    string         `json:"id"`
	CatalogItemInstanceID string         `json:"catalog_item_instance_id"`
	OriginalRequest       map[string]any `json:"original_request"`
	ValidatedRequest      map[string]any `json:"validated_request"`
	ProviderName          string         `json:"provider_name"`
	PolicyStatus          string         `json:"policy_status"`
	Status                string         `json:"status"`
	DeleteTime            *time.Time     `json:"delete_time"`
	DeletedAt             *time.Time     `json:"deleted_at"` // deprecated name of delete_time
}

func orderBody(vcpus int) map[string]any {
	return map[string]any{"catalog_item_id": "small-fedora-vm", "display_name": "my vm",
		"user_values": []any{map[string]any{"path": "vcpu.count", "value": vcpus}}, "labels": map[string]any{"env": "dev"}}
}

func (e *env) order(t *testing.T, id string) order {
	t.Helper()
	var o order
	e.s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id+"?show_deleted=true", nil).Want(t, http.StatusOK).JSON(t, &o)
	return o
}

func (e *env) resource(t *testing.T, id string) resource {
	t.Helper()
	var r resource
	e.s.Do(t, "GET", "/api/v1/resources/"+id+"?show_deleted=true", nil).Want(t, http.StatusOK).JSON(t, &r)
	return r
}

// report PUTs a provider status report for the instance.
func (e *env) report(t *testing.T, instanceID, status string) {
	t.Helper()
	e.s.ReportStatus(t, instanceID, status)
}

func (e *env) waitState(t *testing.T, id, state string) order {
	t.Helper()
	var o order
	poll.Until(t, "order "+id+" is "+state, func() bool { o = e.order(t, id); return o.State == state })
	return o
}

func (e *env) policy(t *testing.T, id, rego string) {
	t.Helper()
	e.s.Do(t, "POST", "/api/v1/policies?id="+id, map[string]any{
		"display_name": id, "policy_type": "GLOBAL", "priority": len(id), "rego_code": rego,
	}).Want(t, http.StatusCreated)
}
