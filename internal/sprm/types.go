package sprm

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/pkg/provider"
)

// jsonUnmarshal is json.Unmarshal (a var only to keep errors.go import-light).
var jsonUnmarshal = json.Unmarshal

// Provider health states (API.md, providers).
const (
	// HealthUnknown is a registration's (or a moved endpoint's) status
	// until its first health check: it takes no orders before one passed.
	HealthUnknown     = "unknown"
	HealthHealthy     = "healthy"
	HealthDegraded    = "degraded"
	HealthUnavailable = "unavailable"
)

// Provider is a registered service provider.
type Provider struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Endpoint     string            `json:"endpoint"`
	ServiceTypes []string          `json:"service_types"`
	Metadata     map[string]string `json:"metadata"`
	Capacity     map[string]int64  `json:"capacity"`
	Operations   []string          `json:"operations"`
	// Projects are the projects whose orders the provider serves (["*"]:
	// every one): its token's grant when a provider's service account
	// registered it, every project when an admin did.
	Projects []string `json:"projects"`
	// Status is healthy, degraded or unavailable.
	Status     string       `json:"status"`
	Health     HealthRecord `json:"health"`
	Version    int64        `json:"-"`
	CreateTime time.Time    `json:"create_time"`
	UpdateTime time.Time    `json:"update_time"`
	// PreviousEndpoint is the endpoint the provider had before its last
	// move to another ("" if it never moved), and EndpointChangeTime when
	// it moved: a name registered by two replicas shows it.
	PreviousEndpoint   string     `json:"previous_endpoint"`
	EndpointChangeTime *time.Time `json:"endpoint_change_time"`
	// CallToken is the secret the provider registered for Steward to
	// present on each call to it; it is never shown.
	CallToken string `json:"-"`

	nextCheckTime time.Time
}

// calling is ctx for a call to the provider: it carries the provider's
// call token.
func (p Provider) calling(ctx context.Context) context.Context {
	return provider.WithCallToken(ctx, p.CallToken)
}

// HealthRecord is the outcome of the health checks so far.
type HealthRecord struct {
	LastCheckTime       *time.Time `json:"last_check_time"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	Message             string     `json:"message"`
}

// Serves reports whether the provider offers serviceType.
func (p Provider) Serves(serviceType string) bool {
	for _, t := range p.ServiceTypes {
		if t == serviceType {
			return true
		}
	}
	return false
}

// ServesProject reports whether the provider may serve project's orders.
func (p Provider) ServesProject(project string) bool {
	return slices.Contains(p.Projects, auth.AllProjects) || slices.Contains(p.Projects, project)
}

// Instance is a service-type instance (API.md, service-type-instances).
type Instance struct {
	ID            string          `json:"id"`
	Project       string          `json:"-"`
	Name          string          `json:"name"`
	ProviderName  string          `json:"provider_name"`
	ServiceType   string          `json:"service_type"`
	Status        provider.Status `json:"status"`
	StatusMessage string          `json:"status_message"`
	// RestartCount is how many times the provider restarted the workload,
	// as its last report said; nil until a report carries one.
	RestartCount *int64         `json:"restart_count,omitempty"`
	Spec         map[string]any `json:"spec"`
	// Outputs are the provider's non-secret values about the instance, as
	// its last answer or report that carried any gave them; {} until one did.
	Outputs provider.Outputs `json:"outputs"`
	// Synced is the provider's last comparison of the instance with its
	// spec, as its last report that made one said; nil until one did.
	Synced *provider.Sync `json:"synced"`
	// Deletion is set once a deletion was queued for the cleanup worker.
	Deletion   *Deletion `json:"deletion"`
	Version    int64     `json:"-"`
	CreateTime time.Time `json:"create_time"`
	UpdateTime time.Time `json:"update_time"`
	// DeleteTime is when the instance's deletion was requested (a delete
	// accepted, a deletion queued, or a provider's report of one Steward did
	// not ask for); it never moves once set.
	DeleteTime *time.Time `json:"delete_time"`
	// DeletedAt is when the deletion completed (deprecated in the API:
	// the name says nothing of which moment it is).
	DeletedAt *time.Time `json:"deleted_at"`

	statusObservedTime *time.Time
	// The stored documents of an instance read for a list, passed through
	// undecoded by the list's encoder (Spec, Outputs and Synced are then
	// nil).
	specJSON, outputsJSON, syncedJSON json.RawMessage
}

// Deletion is a queued deletion of an instance.
type Deletion struct {
	Status        string `json:"status"`
	CleanupTaskID string `json:"cleanup_task_id"`
}

// Cleanup task states (rehydration seed; a task that succeeds is removed).
const (
	TaskPending    = "PENDING"
	TaskInProgress = "IN_PROGRESS"
	TaskFailed     = "FAILED"
)

// CleanupTask is a deletion the cleanup worker performs on a provider.
type CleanupTask struct {
	ID         string `json:"id"`
	InstanceID string `json:"instance_id"`
	// OrderID is the order the instance was made for ("" for an instance
	// made through the SPRM's own API).
	OrderID      string     `json:"order_id"`
	ProviderName string     `json:"provider_name"`
	ServiceType  string     `json:"service_type"`
	RequestedAt  time.Time  `json:"requested_at"`
	RetryCount   int        `json:"retry_count"`
	Status       string     `json:"status"`
	LastAttempt  *time.Time `json:"last_attempt"`
	LastError    string     `json:"last_error"`
	CreateTime   time.Time  `json:"create_time"`
	UpdateTime   time.Time  `json:"update_time"`
}
