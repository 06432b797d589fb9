// Package lifecycle owns lifecycle definitions, the state machines orders
// (catalog item instances) follow, after Inmanta LSM's (the seed
// lifecycle-service-manager.txt; research/lsm-peers.md §1.4–§1.7), and the
// engine that runs orders on them. It stores definitions, checks them and
// serves them at /api/v1/lifecycles beside the built-ins simple and
// service; the engine reads them through [Definition.State],
// [Definition.Transfer], [Definition.APITransfer] and [ApplyOperation]. The
// engine (The engine: orders, below) holds the orders, served at
// /api/v1/catalog-item-instances, from create to tombstone: their attribute
// sets, transfers and event log, their hierarchy (parents,
// cascade/restrict), the deletion gate and force delete, the status
// mirrored from their resources, and their Ready and Healthy conditions
// from provider status, adapter reports and runtimes.
//
// # Definitions
//
// A definition has an initial state, states and transfers. A state has a
// model_state (inactive, candidate, designed, active), flags the engine
// acts on when an order enters it (export_resources: realise the resource
// with the active attributes; purge_resources: delete it; deleted:
// terminal), validate_self (candidate, active or null) and a label (info,
// success, warning, danger; default info). A transfer goes from source to
// target on a trigger:
//
//   - auto: as soon as the order is in the source state;
//   - api: on request (`:setState`), one per (source, target);
//   - on_update: on a PATCH, which first stores the new attributes as the
//     candidate set;
//   - on_delete: on a DELETE;
//   - resource: on the outcome of a deployment, success to target and
//     failure to error (default: the source, a retry).
//
// Creating an order is not a transfer: it enters initial_state with the
// posted attributes as its candidate set. An auto or api transfer may
// validate (the candidate attributes, through the policy chain) and then
// needs an error state for a failed validation. target_operation and
// error_operation act on the attribute sets on each edge: promote
// (candidate → active, active → rollback), rollback (rollback → active,
// active → candidate), clear candidate, clear active, clear rollback.
//
// A definition is checked before it is stored ([Definition.Validate]): every
// name resolves, values are in their sets, no trigger has two transfers to
// choose from, every state is reachable, auto transfers do not loop, and
// no promote or rollback is bound to fail. That last check is a dataflow
// analysis over which attribute sets are non-empty: a new order holds
// (candidate), an update adds candidate, each edge applies its operation,
// and the values each state can hold are iterated to a fixed point; a
// promote whose source state never holds a candidate set (a rollback
// without a rollback set) is refused. Some rules are Steward's own, not
// LSM's: error and error_operation only on transfers that can fail
// (validating and resource ones); a state does not both export and purge
// (they are opposite actions here, where LSM's deleting exports "purged"
// resources), and a deleted state does not export. A definition holds at
// most [MaxStates] states and [MaxTransfers] transfers, after expansion.
//
// # Compact form
//
// Writing every state and transfer out is verbose (inmanta-core #10047), so
// a POST or PUT may send "compact" instead of states and transfers. The
// server expands it, checks the expansion like any definition, and stores
// both: GET answers the expansion and compact as it was sent. A compact
// definition has initial_state; states, an object of name → words (one
// model state; export, purge, deleted; validate_self=candidate|active; a
// label; abort=<state>, which adds `<this> -> <state>: api clear candidate`);
// transfers, lines of
//
//	<source>[, <source>…] -> <target>: <trigger> [validate] [<op>] [| <error> [<op>]] [# description]
//
// with ops spelled promote, rollback, clear-candidate, clear-active,
// clear-rollback and source * meaning every state that is neither deleted
// nor the target; and on_delete, a state that every state gets an
// on_delete transfer to unless it is deleted, purging, that state itself,
// or has one already. The expansion lists the states in the order written,
// then each line's transfers, then the abort edges, then the on_delete
// ones. Errors name what the client wrote: compact.transfers[2],
// compact.states.up, compact.on_delete. Full members (initial_state,
// states, transfers) sent beside compact must equal its expansion, so a
// GET's answer can be PUT back; set compact to null to edit the full form.
//
// # Built-ins
//
// simple and service are written in the compact form (builtin/*.json) and
// are read-only. simple is the table of research §1.6 exactly. Where the
// source says nothing, these choices were made: start, acknowledged and the
// update_* states that do not deploy are candidate (designed and
// update_designed are designed), the exporting ones active, rejected and
// terminated inactive; rollback is labelled warning; validate_self is null
// everywhere.
//
// service follows §1.6's bullets, with these choices where they are vague:
// the "auto that config can disable" edges are plain auto transfers with
// their api twins beside them (Steward has no switch to turn auto transfers
// off yet; an engine option could, and the api twins are then the approval
// gate); acknowledged → designed validates (error: rejected) and designed →
// creating promotes, update_acknowledged → update_designed validates
// (error: update_rejected) and update_designed → update_inprogress
// promotes; the failed twins mirror every update step, including the
// revalidate self-edge and the approval gate, and go back to failed on
// abort, clearing the candidate; update_acknowledged and update_designed
// (and their twins) get the same abort edge as update_rejected; each
// update step that deploys nothing has a resource transfer from itself and
// its twin to itself, with the twin as error state, so deploy outcomes keep
// the up/failed distinction while an update waits; deletion is as in simple
// plus the direct on_delete to terminated from start, acknowledged,
// designed and rejected.
//
// # The engine: orders
//
// The package owns the order (catalog item instance, DESIGN §2) from
// create to tombstone, at the top of the domains: it calls the catalog
// (specs, service types) and placement (place, record, update, delete,
// rehydrate); placement reports what becomes of resources back through
// placement.OrderObserver, which [Service] implements (ResourceStatusTx and
// friends): it is the one observer of provider status.
//
// A create builds the spec from the catalog item (a user value at an
// x-modifier r attribute is 400 ATTRIBUTE_NOT_UPDATABLE), puts it in the
// candidate set and enters the initial state. Every transfer (fireTx)
// applies its operation (promote, rollback, clear), bumps the version (a
// self-transfer without an operation does nothing), records an event, and
// enters the next state (enterTx), which
//
//   - takes the state's on_delete transfer if a delete is pending;
//   - in an exporting state, realises the active set: a first resource
//     (placement.RecordTx, which queues its provisioning), or, when the
//     resource's intent differs, placement.UpdateTx (in place on a
//     provider that registered "update", else a replacement created before
//     the old resource is retired); realised already, the resource's status
//     now is the outcome of the state's resource transfer. The resource's
//     intent is the active set as asked (Attributes.Requested); the active
//     set becomes what the policy chain made of it, the spec the provider
//     runs, so the order shows what runs;
//   - in a purging state, deletes the resource (placement.DeleteTx);
//   - fires the state's auto transfer, or, when it validates, queues a
//     River job for it in the same transaction.
//
// All of it happens in the transaction of the trigger, with the order row
// locked, so nothing acknowledged is lost and a crash leaves all or none.
// Validations run the policy chain (placement.Place) on the state's
// validate_self set (the candidate by default): success keeps what the
// chain made of the set for its realisation and takes the target edge; a
// refusal, a conflict or no provider takes the error edge, with the reason
// in last_error and the event. The validation a request leads to directly
// (the create's first, a PATCH's, a validating :setState) runs in the
// request, before its transaction: a create refused by policy answers 406
// and stores nothing (API.md), a PATCH answers with its outcome. Only
// validations that follow other transfers (LSM's service lifecycle), or
// whose chain could not run, are jobs.
//
// Resource status fires resource transfers: in an exporting state RUNNING
// is success, FAILED and DELETED failure; in a purging state DELETED is
// success. While an update is realised (PendingInstanceID) only the
// update's own outcome counts, so a late report of the old spec cannot end
// it.
//
// PATCH (user_values through the item's fields, dict-path edits with
// [key=value] selectors) may change only rw+ attributes of the active set
// as asked (400 ATTRIBUTE_NOT_UPDATABLE naming each other path), then runs the
// state's on_update transfer (409 INVALID_STATE without one). DELETE sets
// deleted_at and runs on_delete, now or on reaching a state that has one.
// :setState takes an api transfer and needs the caller's version. The
// user values each set was asked with move with the sets (userValueSets),
// so an aborted update or a rollback shows again those of the set that
// runs. An order
// of a type with an identity attribute is also addressed as
// <service_type>.<attribute>=<value>.
//
// # Storage
//
// Stored lifecycles are one row each (table lifecycles) with the expanded
// states and transfers as JSON and the compact source as text. Lists merge
// the built-ins in and page by id. Deleting a lifecycle asks
// [Config.Usage] for the service types that use it and refuses while
// there are any.
package lifecycle
