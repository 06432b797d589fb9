package policy

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrPolicyNotFound is returned when no policy has the id.
	ErrPolicyNotFound = errors.New("policy not found")
	// ErrPolicyExists is returned when a create's id is taken, or when a
	// policy's priority or display name is already held by another policy
	// of the same policy_type (API.md: "same priority or name in a level").
	ErrPolicyExists = errors.New("a policy with this id, priority or display name already exists")
	// ErrInvalidPolicy is returned (as an [*InvalidPolicyError]) when a
	// policy's Rego does not parse or compile, lacks a rule main, or declares
	// a package another enabled policy already uses.
	ErrInvalidPolicy = errors.New("the policy's Rego is not a valid policy module")
	// ErrRejected is returned (as a [*RejectedError]) when a policy rejects
	// the request.
	ErrRejected = errors.New("the request was rejected by a policy")
	// ErrConflict is returned (as a [*ConflictError]) when a policy's output
	// contradicts what an earlier policy decided.
	ErrConflict = errors.New("policies conflict")
	// ErrEvaluation is returned (as an [*EvaluationError]) when a policy
	// fails at run time or answers outside the Rego contract.
	ErrEvaluation = errors.New("a policy failed to evaluate")
	// ErrNoProvider is returned by [PickProvider] when no provider fits.
	ErrNoProvider = errors.New("no provider is available for the request")
	// ErrNotLoaded is returned by [Service.Evaluate] before the policy set
	// was first loaded ([Service.Start] or [Service.Load]): evaluating an
	// empty set would approve everything.
	ErrNotLoaded = errors.New("the policy set is not loaded yet")
)

// Ref names a policy in errors: its display name and id.
type Ref struct {
	ID   string `json:"policy_id"`
	Name string `json:"policy_name"`
}

func (r Ref) String() string { return fmt.Sprintf("%q (%s)", r.Name, r.ID) }

// InvalidPolicyError is ErrInvalidPolicy with OPA's messages. The policy
// set in force does not change.
type InvalidPolicyError struct {
	// PolicyID is the policy whose module is refused ("" for a new policy
	// without a client id).
	PolicyID string
	// Messages are OPA's parse and compile errors, or our own contract check.
	Messages []string
}

func (e *InvalidPolicyError) Error() string {
	return "invalid policy: " + strings.Join(e.Messages, "; ")
}

// Unwrap makes errors.Is(err, ErrInvalidPolicy) true.
func (e *InvalidPolicyError) Unwrap() error { return ErrInvalidPolicy }

// ProblemFields lists OPA's messages as `errors`.
func (e *InvalidPolicyError) ProblemFields() map[string]any {
	m := map[string]any{"errors": e.Messages}
	if e.PolicyID != "" {
		m["policy_id"] = e.PolicyID
	}
	return m
}

// RejectedError is a policy's rejection of the request (406). Reason is the
// policy's rejection_reason, or why the request's own value breaks a
// constraint the policy set.
type RejectedError struct {
	Policy Ref
	Reason string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("rejected by policy %s: %s", e.Policy, e.Reason)
}

// Unwrap makes errors.Is(err, ErrRejected) true.
func (e *RejectedError) Unwrap() error { return ErrRejected }

// ProblemFields names the policy and its reason.
func (e *RejectedError) ProblemFields() map[string]any {
	return map[string]any{"policy_id": e.Policy.ID, "policy_name": e.Policy.Name, "rejection_reason": e.Reason}
}

// ConflictError is a policy output that contradicts an earlier decision
// (409): loosening a higher level's constraint, a patch that breaks a
// constraint, a provider choice the provider constraints exclude.
type ConflictError struct {
	// Policy is the policy whose output conflicts.
	Policy Ref
	// Field is the spec field at stake (a dotted path), "provider" for a
	// provider conflict.
	Field string
	// With is the earlier policy it conflicts with, when there is one.
	With *Ref
	// Keyword is the JSON Schema keyword at stake in a constraint conflict.
	Keyword string
	// Reason says what conflicts.
	Reason string
}

func (e *ConflictError) Error() string {
	s := fmt.Sprintf("policy %s conflicts on %s: %s", e.Policy, e.Field, e.Reason)
	if e.With != nil && e.With.ID != e.Policy.ID {
		s += fmt.Sprintf(" (against policy %s)", e.With)
	}
	return s
}

// Unwrap makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// ProblemFields names the policies and the field.
func (e *ConflictError) ProblemFields() map[string]any {
	m := map[string]any{"policy_id": e.Policy.ID, "policy_name": e.Policy.Name, "field": e.Field}
	if e.With != nil {
		m["conflicting_policy_id"] = e.With.ID
		m["conflicting_policy_name"] = e.With.Name
	}
	if e.Keyword != "" {
		m["keyword"] = e.Keyword
	}
	return m
}

// EvaluationError is a policy that failed at run time (a Rego error such as
// conflicting rule values, a timeout) or whose main answers outside the
// contract (not an object, a field of the wrong type, a bad schema or
// glob). The chain fails closed: the request is neither approved nor
// rejected, and the operator must fix the policy.
type EvaluationError struct {
	Policy Ref
	Err    error
}

func (e *EvaluationError) Error() string {
	return fmt.Sprintf("evaluate policy %s: %v", e.Policy, e.Err)
}

// Unwrap makes errors.Is(err, ErrEvaluation) true, and exposes the cause.
func (e *EvaluationError) Unwrap() []error { return []error{ErrEvaluation, e.Err} }

// ProblemFields names the policy, and the member of its answer that is
// not in the contract when that is the fault.
func (e *EvaluationError) ProblemFields() map[string]any {
	m := map[string]any{"policy_id": e.Policy.ID, "policy_name": e.Policy.Name}
	var unknown *UnknownKeyError
	if errors.As(e.Err, &unknown) {
		m["output_key"] = unknown.Key
	}
	return m
}
