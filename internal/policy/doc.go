// Package policy is the policy engine (DCM's policy-engine enhancement, and
// the policy re-evaluation step of rehydration-flow.txt). It owns the
// policies: Rego modules stored in the database, compiled into an embedded
// OPA, and run as one chain over each request to create or rehydrate a
// resource.
//
// # Storage and compilation
//
// A policy has a level (policy_type GLOBAL, TENANT or USER), a priority
// (1–1000, default 500, unique within its level, as is its display name),
// a label selector, its Rego and an enabled flag. Its Rego is a Rego v1
// module whose package defines a rule main; the engine queries
// data.<package>.main. Each module is compiled on its own, so a policy
// cannot refer to another's rules, and two enabled policies may not share a
// package. Builtins that reach outside the process (http.send,
// net.lookup_ip_addr, opa.runtime) are not available.
//
// A change is atomic with its compilation. In one transaction it bumps the
// policy_revision row (whose lock serialises policy writers on every
// replica), writes the row, compiles the changed module (even when
// disabled) and then the set of enabled policies the transaction holds. Code
// that does not compile, has no main, or reuses another enabled policy's
// package is refused with an [*InvalidPolicyError] (400 INVALID_POLICY), the
// transaction rolls back and the set in force does not change. On commit
// the new set is swapped in at once; evaluations in flight finish on the
// set they started with. Other replicas notice the new revision on their
// next [Service.Refresh] (every RefreshInterval, 2s by default, from the
// loop [Service.Start] runs on each replica) and load it; unchanged modules
// are not recompiled. A replica evaluates nothing before its first load
// ([ErrNotLoaded]): an empty set would approve everything.
//
// # The chain
//
// [Service.Evaluate] runs the enabled policies whose label selector matches
// the request (key service_type against the service type, project against
// the project, any other key against the request's labels, which are the
// spec's metadata.labels (where DCM's requests carry them) overlaid by the
// order's labels: the order's win on a key both carry; an empty selector
// matches everything), ordered GLOBAL → TENANT → USER, then by priority
// (lower first), then by id. Each policy's input is:
//
//	{"spec": {…} (as patched so far), "service_type": "vm", "labels": {…},
//	 "project": "default", "provider": "" (selected so far),
//	 "current_provider": "" (the provider holding the resource, on rehydration),
//	 "constraints": {"vcpu.count": {"maximum": 4}} (accumulated),
//	 "provider_constraints": {"allow_list", "patterns", "globs", "metadata",
//	   "environment_constraints", "environment_patterns"} (accumulated),
//	 "available_providers": [{"name", "service_types", "metadata", "status",
//	   "environment", "cost"}] (less the excluded),
//	 "exclude_providers": []}
//
// with DCM's names for the same values beside them, so that a policy
// written for DCM reads what it expects: agent (provider), agent_constraints
// and service_provider_constraints (provider_constraints), available_agents
// and exclude_agents. Its main must be an object with any of the members
// below, which are applied in this order; DCM's names are accepted as
// aliases (selected_agent for selected_provider; service_provider_constraints
// and agent_constraints for provider_constraints), and any other member is
// an [*UnknownKeyError]: refused at create when the code shows it, a
// failure of the chain when it appears at run time, because a member the
// engine does not understand may be a restriction it would drop.
//
//   - rejected (bool) and rejection_reason: the chain stops with a
//     [*RejectedError] (406 POLICY_REJECTED) naming the policy.
//   - constraints: dotted field path → JSON Schema (2020-12) for that
//     field's value. Constraints accumulate and all apply (allOf). A later
//     policy's schema (at a lower level, or later in the same level) must
//     be at least as strict as each earlier one it meets, and together they
//     must leave a value: otherwise it is a [*ConflictError] (409
//     POLICY_CONFLICT) naming both policies, the field and the keyword.
//     A later enum or const narrows the field to the values that every
//     constraint admits, as DCM intersects enums; only an empty
//     intersection conflicts. What is compared, and what cannot be, is in strictness.go. An absent
//     field satisfies every constraint.
//   - patch: a JSON merge patch (RFC 7386) of the spec. It may not change
//     service_type.
//   - After new constraints or a patch, the spec is checked against every
//     constraint. A value the request itself sent that breaks one is a
//     rejection by the policy that set the constraint (406: the request asks
//     for what a policy forbids, as DCM treats it). A value some policy
//     patched in that breaks one is a conflict (409) naming the current
//     policy, the field and the constraint's policy: the policies disagree,
//     and the administrator must reconcile them.
//   - provider_constraints {allow_list, patterns, globs, metadata,
//     environment_constraints}: they accumulate as an intersection. A
//     provider satisfies them when it is in the allow list (an empty list
//     allows all), its name matches every pattern (RE2, searched as DCM
//     does; DCM's older single "pattern" is one more) and every glob
//     (path.Match, whole name), its metadata has every key with the same
//     value, and its metadata "environment" is in environment_constraints (a
//     list, or DCM's {allow_list, patterns}). Disjoint allow or environment
//     lists, two values for one metadata key, or constraints that exclude
//     the provider selected earlier are a conflict.
//   - selected_provider: becomes the selection (a later policy may change
//     it). The provider must be available (registered, not excluded), serve
//     the service type and satisfy the provider constraints, else conflict.
//
// A main that is undefined for the request means the policy has nothing to
// say: it is skipped. A policy that fails at run time (a Rego error, the
// chain's EvaluationTimeout) or answers outside the contract (main not an
// object, a member of the wrong type or unknown, a schema that does not
// compile, a malformed pattern or glob) stops the chain with an
// [*EvaluationError] (500 POLICY_EVALUATION_FAILED): the chain fails closed,
// because approving without the broken policy could let through what it
// forbids, and the fault is the administrator's, not the client's.
//
// The [Result] has the evaluated spec, the selected provider ("" when no
// policy chose), APPROVED when the spec came out unchanged or MODIFIED, the
// accumulated constraints, and the ids of the policies that ran.
//
// # The default provider rule
//
// When no policy selects a provider, placement calls [PickProvider]: among
// the providers that are healthy, serve the service type, are not
// excluded, satisfy the accumulated provider constraints and have capacity
// left (capacity["instances"], when set, above their live instances), it
// takes the one with the fewest live instances, then the first by name.
// None is [ErrNoProvider] (503 NO_PROVIDER_AVAILABLE). evaluateRequest is
// advisory and answers selected_provider "" in that case, and does not run
// the rule at all when the request says dry_run_placement false.
package policy
