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
// cascade/restrict), the deletion gate and force delete, the status of
// their resources as the reconcile last applied it, and their Ready and Healthy conditions
// from provider status, adapter reports and runtimes. The rules of the
// gate and of the conditions are package status's: this package reads
// what they need and calls them.
//
// # Definitions
//
// The definition language (states, transfers, triggers, the operations on
// the attribute sets, the checks a definition passes, the compact form
// and the built-ins simple and service) is package statemachine's; its
// documentation describes it. This package stores definitions
// (statemachine.Source expanded and checked, with the compact form as it
// was sent), serves them beside the built-ins, and runs orders through
// them.
//
// # The engine: orders
//
// The package owns the order (catalog item instance, DESIGN §2) from
// create to tombstone, at the top of the domains: it calls the catalog
// (specs, service types) and placement (place, record, update, delete,
// rehydrate), and makes every write of the order; the domains below read
// orders through package order, and so does its resolution of an
// identity. Nothing below calls back up: the SPRM and placement record
// what becomes of an order's resource (an instance's status, an update's
// outcome, a replacement done or failed) as reconcile changes, and the
// order's reconcile (order.reconcile job) applies them in the order they
// were recorded, then checks the deletion gate (reconcile.go).
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
