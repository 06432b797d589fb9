package sprm_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// fast makes the background work quick enough for tests.
func fast(c *server.Config) {
	c.HealthInterval = 100 * time.Millisecond
	c.ProviderFailureThreshold = 2
	c.CleanupInterval = 100 * time.Millisecond
	c.CleanupMaxRetries = 3
	c.ProviderTimeout = 2 * time.Second
}

type env struct {
	s *apitest.Server
	p *providertest.Server
}

// setup starts Steward and a provider registered as "vm-sp" for vm and container.
func setup(t *testing.T, engine store.Engine, adjust ...func(*server.Config)) env {
	t.Helper()
	s := apitest.Start(t, engine, append([]func(*server.Config){fast}, adjust...)...)
	p := providertest.New(t)
	s.Do(t, "POST", "/api/v1/providers", p.Registration("vm-sp", "vm", "container")).Want(t, http.StatusCreated)
	return env{s, p}
}

func vmSpec(name string) map[string]any {
	return map[string]any{
		"service_type": "vm",
		"vcpu":         map[string]any{"count": 2},
		"memory":       map[string]any{"size": "2GB"},
		"guest_os":     map[string]any{"type": "fedora-39"},
		"metadata":     map[string]any{"name": name},
	}
}

type instance struct {
	ID            string         `json:"id"`
	InstanceID    string         `json:"instance_id"`
	Path          string         `json:"path"`
	Name          string         `json:"name"`
	ProviderName  string         `json:"provider_name"`
	ServiceType   string         `json:"service_type"`
	Status        string         `json:"status"`
	StatusMessage string         `json:"status_message"`
	Spec          map[string]any `json:"spec"`
	Deletion      *struct {
		Status        string `json:"status"`
		CleanupTaskID string `json:"cleanup_task_id"`
	} `json:"deletion"`
	DeleteTime *time.Time `json:"delete_time"`
	DeletedAt  *time.Time `json:"deleted_at"` // deprecated: when the deletion completed
	ETag       string     `json:"etag"`
}

type cleanupTask struct {
	ID              string     `json:"id"`
	InstanceID      string     `json:"instance_id"`
	Status          string     `json:"status"`
	RetryCount      int        `json:"retry_count"`
	RequestedAt     time.Time  `json:"requested_at"` // deprecated name of request_time
	RequestTime     time.Time  `json:"request_time"`
	LastAttempt     *time.Time `json:"last_attempt"` // deprecated name of last_attempt_time
	LastAttemptTime *time.Time `json:"last_attempt_time"`
	LastError       string     `json:"last_error"`
}

type providerView struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Health struct {
		ConsecutiveFailures int `json:"consecutive_failures"`
	} `json:"health"`
	ETag string `json:"etag"`
}

func (e env) create(t *testing.T, id string) instance {
	t.Helper()
	var in instance
	e.s.Do(t, "POST", "/api/v1/service-type-instances?id="+id, map[string]any{
		"provider_name": "vm-sp", "spec": vmSpec(id),
	}).Want(t, http.StatusAccepted).JSON(t, &in)
	return in
}

func (e env) instance(t *testing.T, id string) instance {
	t.Helper()
	var in instance
	e.s.Do(t, "GET", "/api/v1/service-type-instances/"+id+"?show_deleted=true", nil).Want(t, http.StatusOK).JSON(t, &in)
	return in
}

func (e env) providerStatus(t *testing.T) string {
	t.Helper()
	var p providerView
	e.s.Do(t, "GET", "/api/v1/providers/vm-sp", nil).Want(t, http.StatusOK).JSON(t, &p)
	return p.Status
}

func (e env) task(t *testing.T, id string) (cleanupTask, int) {
	t.Helper()
	var task cleanupTask
	r := e.s.Do(t, "GET", "/api/v1/cleanup-tasks/"+id, nil)
	if r.Status == http.StatusOK {
		r.JSON(t, &task)
	}
	return task, r.Status
}

func ids(n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

// auditRecord is what the sprm tests read of an audit record.
type auditRecord struct {
	Action  string                    `json:"action"`
	Outcome string                    `json:"outcome"`
	Actor   struct{ Type, ID string } `json:"actor"`
	Details map[string]any            `json:"details"`
}

// auditEvents returns the audit records on target, oldest first.
func (e *env) auditEvents(t *testing.T, target string) []auditRecord {
	t.Helper()
	var page struct{ Results []auditRecord }
	e.s.Do(t, "GET", "/api/v1/audit-events?max_page_size=1000&target="+url.QueryEscape(target), nil).
		Want(t, http.StatusOK).JSON(t, &page)
	return page.Results
}
