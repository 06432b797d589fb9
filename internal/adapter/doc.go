// Package adapter runs adapter task configs: the YAML DSL an adapter is
// written in, and the executor that applies it to one reconcile event at a
// time (deletion-flow seed; modelled on HyperFleet's adapter framework,
// research/hyperfleet.md §3, with its gaps closed). It owns no broker code:
// a consumer decodes the sentinel's steward.reconcile.<service_type>
// CloudEvents into an [Event], calls [Executor.Execute], then
// [Executor.PutReport] or redelivers.
//
// # The DSL
//
//	adapter: {name: cluster-namespace}   # the {adapter} segment of status reports
//	service_types: [cluster]
//	params:        [{name, source, required, default}]      # event.<path> | env.<VAR> | <param>.<path> | {api_call} | {expression}
//	preconditions: [{name, api_call, capture, conditions, expression}]
//	when_deleting: "<CEL bool>"          # empty: the event's deleted_at is set
//	resources:     [{name, manifest, discovery, delete_options: {propagation_policy, after, retain}}]
//	post:          {conditions: [{type, status, reason, message}], data: {key: value}}
//
// examples/adapters/cluster-namespace.yaml is a complete example. Three
// small languages appear: dot paths (event.id, capture field), Go
// templates in every string leaf of a manifest and in api_call URLs (over
// the params, captures and event; missingkey=error; functions lower,
// upper, default, trim, quote, toJson), and CEL (cel-go with ext.Strings)
// everywhere a value is computed.
//
// Config that can be checked at load is checked at load ([Parse], [Load]):
// unknown fields, required fields, unique names, source syntax, operators,
// propagation policies, manifests (literal apiVersion and kind, a fixed
// metadata.name), discovery, every template (including that each name it
// reads is declared before it), every CEL expression (compiled with the
// variables in scope at its place, so an unknown variable fails), and the
// deletion order (unknown after names, cycles). The error lists every
// problem with its field path.
//
// # Execution
//
// Execute runs params → preconditions → resources → post. Post always
// runs and yields the report, also after a failure, except when there is
// nothing to report to or a retry is due (below).
//
// Preconditions gate both modes: a deletion waits, like a creation, until
// they pass.
//
// Creation mode server-side applies every resource in order (field
// manager steward-adapter-<name>, forced), labelled steward.dev/order-id
// and annotated steward.dev/generation, stopping at the first failure;
// then every resource is discovered for post's resources map.
//
// Deletion mode deletes in the order delete_options.after gives, one pass
// per event: what can go goes (with its exact propagation_policy; Orphan
// deletes the object and leaves its dependents, DESIGN §4), what is gone
// right after its delete lets its dependents go in the same pass, and the
// rest is reported pending until a later event. retain: true never
// deletes, and counts as done; not found counts as deleted. The graph is
// checked again at execution (a Config built in Go skips Parse): a cycle
// or an unknown name deletes nothing and is reported.
//
// # CEL variables
//
// Every param and capture by name; event (the event's data); now (a
// timestamp); and in post, resources.<name> (each discovered object as a
// map, absent when not found: test with has()) and adapter: {mode:
// "create"|"delete", execution_status: "success"|"failed"|"skipped",
// resources_skipped, skip_reason, error: {phase, resource, message}}.
// A capture expression instead sees the API response's top-level fields.
//
// # Status decision matrix
//
// This is the contract between adapters and Steward's deletion gate
// (DESIGN §4: an adapter is cleaned up when it reports Applied=False,
// Health=True, for the deleting generation; or Finalized=True). Post
// starts from the row of the situation, then applies the config's
// overrides per condition type, except that an override never replaces a
// Health=False the executor set itself.
//
//	situation                                    | Applied                            | Available                 | Health
//	---------------------------------------------+------------------------------------+---------------------------+--------------------------------------------
//	created/applied, all fine                    | True  AppliedSuccessfully          | True  ResourcesCreated    | True  Healthy
//	preconditions not met (skipped)              | True if any resource exists,       | False PreconditionsNotMet | True  Healthy
//	                                             |   else False; PreconditionsNotMet  |                           |
//	apply failed (terminal, e.g. a 4xx)          | True if any exists; ApplyFailed    | False ApplyFailed         | False ApplyFailed (resource and error)
//	deletion in progress (something remains)     | True  DeletionInProgress           | False Deleting            | True  Healthy
//	                                             |   (pending resources, and what     |                           |
//	                                             |   each waits for)                  |                           |
//	deletion complete (all non-retained gone)    | False Deleted                      | False Deleted             | True  Healthy; plus Finalized=True Deleted
//	deletion config invalid (cycle, unknown)     | True  (the Health reason)          | False Deleting            | False InvalidDeletionOrder (a cycle)
//	                                             |                                    |                           |   or InvalidDeletionConfig (unknown name)
//	delete call failed (terminal)                | True  DeletionFailed               | False Deleting            | False DeletionFailed
//	params/preconditions/when_deleting/discovery | True if any exists;                | False ExecutionFailed     | False ExecutionFailed (phase and step)
//	  evaluation error                           |   ExecutionFailed                  |                           |
//
// A post override or data expression that fails to evaluate keeps the
// default and sets Health=False ExecutionFailed naming the field.
//
// # Failures
//
// Terminal failures are reported (Health=False) and not retried: the
// sentinel sends the next event anyway while the order is not ready.
// Transient ones (Kubernetes or the Steward API unreachable, 5xx, 429,
// timeouts, a cancelled ctx) set [Outcome.Retry] and no report, so a
// network blip never flaps Health; the caller redelivers. A 404 from an
// api_call on the order's own URL means the order is gone: no report
// (there is no order to report on) and nothing to retry.
// Execute's own error is only for an event it cannot process at all
// ([ErrUnhandledEvent], [ErrInvalidEvent]).
package adapter
