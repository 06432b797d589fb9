package provider

import (
	"context"
	"errors"
	"time"
)

// Status is the state of a service instance as its provider sees it.
type Status string

// The statuses of API.md (service-type-instances).
const (
	StatusPending      Status = "PENDING"
	StatusProvisioning Status = "PROVISIONING"
	StatusRunning      Status = "RUNNING"
	// StatusCompleted is a workload that ran to its end and succeeded (a
	// process that exited 0 and is not restarted): nothing runs, and
	// nothing went wrong.
	StatusCompleted Status = "COMPLETED"
	StatusFailed    Status = "FAILED"
	StatusDeleting  Status = "DELETING"
	StatusDeleted   Status = "DELETED"
	StatusUnknown   Status = "UNKNOWN"
)

// Valid reports whether s is one of the statuses above.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusProvisioning, StatusRunning, StatusCompleted, StatusFailed, StatusDeleting, StatusDeleted, StatusUnknown:
		return true
	}
	return false
}

// CreateRequest is what Steward asks a provider to realise:
// POST {endpoint}/api/v1/services.
type CreateRequest struct {
	// InstanceID is Steward's id for the instance. Creating the same
	// InstanceID twice must not create two things (it is also sent as the
	// Idempotency-Key header).
	InstanceID  string         `json:"instance_id"`
	ServiceType string         `json:"service_type"`
	Spec        map[string]any `json:"spec"`
	Metadata    CreateMetadata `json:"metadata"`
	// Source, set only for a provider registered with [OperationExport],
	// asks it to fill the new instance with another's data before it is
	// RUNNING (a rehydration; see [ExportSource]). A replayed create with a
	// source copies nothing again.
	Source *ExportSource `json:"source,omitempty"`
}

// CreateMetadata says whose order an instance realises.
type CreateMetadata struct {
	OrderID string            `json:"order_id,omitempty"`
	Project string            `json:"project,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
}

// Instance is a provider's view of one instance: the answer to create and get.
type Instance struct {
	InstanceID string `json:"instance_id"`
	Status     Status `json:"status"`
	Message    string `json:"message,omitempty"`
	// Outputs are the non-secret values that say how to reach and what is
	// observed of the instance (a database's host, port and name; its size):
	// shown on the instance and on the order. Nil leaves the ones Steward
	// has; a map replaces them. Never put a secret here. See [Outputs].
	Outputs Outputs `json:"outputs,omitempty"`
	// Synced is the provider's last comparison of the instance with its
	// spec, when it makes any (see [StatusReport.Synced]).
	Synced *Sync `json:"synced,omitempty"`
}

// Outputs are an instance's non-secret output values: at most
// [MaxOutputs], each named by a lower-case identifier
// (^[a-z][a-z0-9_]{0,62}$) and a string of at most [MaxOutputLen] bytes, a
// number or a boolean.
type Outputs map[string]any

// The limits of [Outputs].
const (
	MaxOutputs   = 32
	MaxOutputLen = 1024
)

// Health is the answer to GET {endpoint}/api/v1/health.
type Health struct {
	// Status is "healthy" or "unhealthy" (reachable, but its backend is down).
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// The values of [Health.Status]. A provider that cannot answer at all is the
// third state, unreachable, which only the caller can see.
const (
	HealthHealthy   = "healthy"
	HealthUnhealthy = "unhealthy"
)

// StatusReport is a status change a provider reports to Steward, by
// PUT /api/v1/service-type-instances/{instance_id}/status or as the data of
// a CloudEvent on the NATS subject steward.status.<service_type>.
type StatusReport struct {
	// InstanceID is required on NATS; on HTTP it is in the path.
	InstanceID string `json:"instance_id,omitempty"`
	Status     Status `json:"status"`
	Message    string `json:"message,omitempty"`
	// ObservedTime is when the provider saw the status. Steward ignores a
	// report older than the last one it applied.
	ObservedTime time.Time `json:"observed_time"`
	// RestartCount, when set, is how many times the provider has restarted
	// the instance's workload (since it last started it afresh: a create,
	// an update, a repair). A provider reports every change of a running
	// instance, a restart included, with its new message and count. Nil
	// when the provider does not count restarts.
	RestartCount *int64 `json:"restart_count,omitempty"`
	// Outputs, when set, replace the instance's outputs (see
	// [Instance.Outputs]); nil leaves them as they are.
	Outputs Outputs `json:"outputs,omitempty"`
	// Synced, when set, says whether the instance as the provider found it
	// matches its spec; the order shows it as its Synced condition. Nil
	// leaves what was said before.
	Synced *Sync `json:"synced,omitempty"`
}

// Sync is a provider's comparison of an instance with its spec (drift).
type Sync struct {
	// InSync is false when something differs from the spec.
	InSync bool `json:"in_sync"`
	// Differences name what differs, one per field, as
	// "connection_limit: want 20, found 100"; empty when in sync. At most
	// [MaxSyncDifferences], each at most [MaxSyncDifferenceLen] bytes.
	Differences []string `json:"differences,omitempty"`
	// ObservedTime is when the provider compared; zero in a report means
	// the report's observed time.
	ObservedTime time.Time `json:"observed_time,omitzero"`
}

// The limits of [Sync].
const (
	MaxSyncDifferences   = 32
	MaxSyncDifferenceLen = 512
)

// MaxMessageLen is the longest message Steward takes in a report (a
// [StatusReport]'s, a repair step's or error's, a runtime member's), in
// characters; the reporters cut a longer one (docs/api.md, Limits).
const MaxMessageLen = 4096

// StatusSubject is the NATS subject for status reports of a service type.
func StatusSubject(serviceType string) string { return "steward.status." + serviceType }

// StatusEventType is the CloudEvents type of a status report.
const StatusEventType = "dev.steward.provider.status"

// ErrNotFound is returned by a Provider for an instance it does not hold;
// the server answers 404, which Steward reads as "already gone".
var ErrNotFound = errors.New("provider: instance not found")

// Provider realises instances. Implementations must be safe for concurrent
// use, and every method must be idempotent:
//   - Create with an InstanceID it already holds returns that instance as it
//     is now, and creates nothing.
//   - Delete of an instance it does not hold returns ErrNotFound (Steward
//     counts that as done); Delete may return before the instance is gone,
//     with its status DELETING, and report DELETED later.
//   - Get of an unknown instance returns ErrNotFound.
//
// Create should return quickly (status PROVISIONING) and report RUNNING or
// FAILED later through a StatusReporter. An error that implements
// interface{ HTTPStatus() int } sets the HTTP status the server answers
// (4xx for a refusal of the request); other errors answer 500. A Provider
// may also implement [Updater] to change instances in place.
type Provider interface {
	Create(ctx context.Context, req CreateRequest) (Instance, error)
	Get(ctx context.Context, instanceID string) (Instance, error)
	Delete(ctx context.Context, instanceID string) (Instance, error)
	// Health returns nil when the provider can serve, else why not.
	Health(ctx context.Context) error
}

// UpdateRequest is what Steward asks a provider to change in place:
// PUT {endpoint}/api/v1/services/{instance_id} with {"service_type",
// "spec"}, served only for a provider that implements [Updater].
type UpdateRequest struct {
	// InstanceID is the instance to update. It travels in the path, never
	// in the body: [NewServer] fills it from the path.
	InstanceID  string         `json:"-"`
	ServiceType string         `json:"service_type"`
	Spec        map[string]any `json:"spec"`
}

// Updater is implemented by a [Provider] that can change an instance's spec
// in place; it registers with [OperationUpdate] in [Registration.Operations].
// Steward realises the updates of a provider without it by replacement:
// create the new instance, then delete the old. [NewServer] serves
// PUT /api/v1/services/{instance_id} only for a Provider that implements
// Updater, and answers 405 otherwise.
//
// Update must be safe for concurrent use and idempotent:
//   - Update to the spec the instance already has changes nothing and
//     returns the instance as it is now, so a repeated call is harmless.
//   - Update of an instance it does not hold returns ErrNotFound (404).
//
// Update should return quickly with status PROVISIONING and report RUNNING
// or FAILED for the new spec later through a StatusReporter, each report
// with an ObservedTime after the update was accepted, so Steward cannot
// take a report about the old spec for one about the new. Errors answer as
// for Provider; a refusal (4xx, such as a spec the provider cannot realise)
// must leave the instance as it was.
type Updater interface {
	Update(ctx context.Context, req UpdateRequest) (Instance, error)
}

// OperationUpdate is the entry of [Registration.Operations] that says a
// provider serves in-place updates (it implements [Updater]).
const OperationUpdate = "update"

// Registration is what a provider tells Steward about itself:
// POST /api/v1/providers, idempotent by Name.
type Registration struct {
	Name         string            `json:"name"`
	Endpoint     string            `json:"endpoint"`
	ServiceTypes []string          `json:"service_types"`
	Metadata     map[string]string `json:"metadata,omitempty"`
	Capacity     map[string]int64  `json:"capacity,omitempty"`
	// Operations lists what it supports beyond create/get/delete:
	// [OperationUpdate] for a provider that implements [Updater].
	Operations []string `json:"operations,omitempty"`
	// CallToken is the secret Steward presents on every call to the
	// provider ("Authorization: Bearer <CallToken>"), so that the provider
	// can refuse every other caller ([ServerConfig.Token]). Each
	// registration replaces the one before: a provider rotates it by
	// registering again. Steward never shows it back. Empty: Steward calls
	// without a token, and the provider is open to any caller that reaches
	// it.
	CallToken string `json:"call_token,omitempty"`
}
