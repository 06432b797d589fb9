package provider

import (
	"context"
	"time"
)

// The repair actions of the runtime-reconcile-repair seed. Reconcile
// corrects drift without destructive restarts; repair may restart runtime
// services within its scope; restart (simple runtimes only) restarts the
// whole runtime.
const (
	RepairActionRepair    = "repair"
	RepairActionReconcile = "reconcile"
	RepairActionRestart   = "restart"
)

// The scopes of a repair operation.
const (
	ScopeWholeRuntime = "whole_runtime"
	ScopeControlPlane = "control_plane"
	ScopeMember       = "member"
)

// The seed's step names, in the order a repair runs them. A worker may add
// more specific names; it should use these where they fit.
const (
	StepPrecheck                = "precheck"
	StepRuntimeStateDiscovery   = "runtime_state_discovery"
	StepMemberHealthCheck       = "member_health_check"
	StepServiceReconcile        = "service_reconcile"
	StepCertificateOrKubeconfig = "certificate_or_kubeconfig_reconcile"
	StepEndpointReconcile       = "endpoint_reconcile"
	StepPostRepairHealthCheck   = "post_repair_health_check"
	StepReportStatus            = "report_status"
)

// RepairStepNames are the seed's eight steps in order.
var RepairStepNames = []string{
	StepPrecheck, StepRuntimeStateDiscovery, StepMemberHealthCheck, StepServiceReconcile,
	StepCertificateOrKubeconfig, StepEndpointReconcile, StepPostRepairHealthCheck, StepReportStatus,
}

// The statuses of a repair operation (pending, running, succeeded, failed)
// and of its steps (all five).
const (
	RepairPending   = "pending"
	RepairRunning   = "running"
	RepairSucceeded = "succeeded"
	RepairFailed    = "failed"
	RepairSkipped   = "skipped"
)

// The roles of a runtime's members.
const (
	MemberRoleServer = "server"
	MemberRoleAgent  = "agent"
)

// The health of a runtime (RuntimeState.Health) and of its members.
const (
	RuntimeHealthy  = "healthy"
	RuntimeDegraded = "degraded"
	RuntimeFailed   = "failed"
)

// OperationRepair is the entry of [Registration.Operations] that says a
// provider executes repair operations (it implements [Repairer]).
const OperationRepair = "repair"

// RepairRequest is a repair operation Steward hands to the provider that
// owns an app instance: POST {endpoint}/api/v1/services/{instance_id}/repair,
// with the Idempotency-Key header set to OperationID.
type RepairRequest struct {
	// InstanceID is the provider's instance; it travels in the path.
	InstanceID     string `json:"-"`
	OperationID    string `json:"operation_id"`
	AppInstanceID  string `json:"app_instance_id"`
	Project        string `json:"project"`
	ServiceType    string `json:"service_type"`
	Action         string `json:"action"`
	Scope          string `json:"scope"`
	TargetMemberID string `json:"target_member_id,omitempty"`
	ComponentKey   string `json:"component_key,omitempty"`
	// ReportPath is where the worker posts its [RepairReport]s, relative to
	// Steward's base URL.
	ReportPath string `json:"report_path"`
	// Token is the worker's credential: it may report on this operation
	// and nothing else. A redelivery carries a new one.
	Token string `json:"token"`
	// ObservedState is the runtime state Steward knows (the last report of
	// the runtime or of an earlier operation), nil when none came yet.
	ObservedState *RuntimeState `json:"observed_state,omitempty"`
}

// RepairAccepted is a provider's answer to a [RepairRequest].
type RepairAccepted struct {
	OperationID string `json:"operation_id"`
	Status      string `json:"status"`
}

// Repairer is implemented by a [Provider] that executes repair operations;
// it registers with [OperationRepair] in [Registration.Operations].
//
// Repair must return quickly, run the operation in the background and
// report its progress step by step through [HTTPReporter.ReportRepair]. It
// must be idempotent by OperationID: a redelivered request for an
// operation it already runs or ran starts nothing new (it may take the new
// Token). A repair that would need to rebuild a member must fail with a
// deterministic error code, never recreate it. Repair of an instance it
// does not hold returns [ErrNotFound].
type Repairer interface {
	Repair(ctx context.Context, req RepairRequest) (RepairAccepted, error)
}

// RepairReport is a worker's progress report on a repair operation:
// POST {StewardURL}{ReportPath}.
type RepairReport struct {
	// Status is the operation's: pending, running, succeeded or failed.
	Status string       `json:"status"`
	Steps  []RepairStep `json:"steps,omitempty"`
	// Error is required with status failed: a deterministic code and a
	// message.
	Error        *RepairError  `json:"error,omitempty"`
	RuntimeState *RuntimeState `json:"runtime_state,omitempty"`
}

// RepairStep is one step's progress. Steps are merged by name: a report
// need only carry the steps that changed.
type RepairStep struct {
	Name       string     `json:"name"`
	Status     string     `json:"status"`
	Message    string     `json:"message,omitempty"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// RepairError is a repair's deterministic error.
type RepairError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// RuntimeState is what a provider or worker observes of an app instance's
// runtime.
type RuntimeState struct {
	// Health is healthy, degraded (usable, with reduced capacity) or
	// failed (unusable).
	Health string `json:"health"`
	// RepairAvailable says whether a repair could still help; false with
	// health failed means only replacing the instance will.
	RepairAvailable *bool `json:"repair_available,omitempty"`
	// QuorumSafe says the worker has proved that restarting a server keeps
	// quorum and ordering; without it Steward refuses destructive repairs
	// of a multi-server control plane.
	QuorumSafe *bool    `json:"quorum_safe,omitempty"`
	Members    []Member `json:"members,omitempty"`
}

// Member is one member of a runtime: a node, a replica, a process.
type Member struct {
	ID string `json:"id"`
	// Role is server or agent.
	Role string `json:"role"`
	// Health is healthy, degraded or failed.
	Health  string `json:"health"`
	Message string `json:"message,omitempty"`
}

// RuntimeReport is a provider's report of an app instance's runtime:
// PUT {StewardURL}/api/v1/projects/{project}/app-instances/{app_instance_id}/runtime.
// A report older than the last one applied is ignored.
type RuntimeReport struct {
	RuntimeState
	ObservedTime time.Time `json:"observed_time"`
}
