// Package order is the read side of an order: the one record of it that
// every domain reaches by an import. It sits beside the store, below every
// domain, and imports nothing else of Steward's; the lifecycle, at the
// top, keeps every write.
//
// # The record
//
// An order (the API's catalog item instance, the table
// catalog_item_instances) is a request for a service made from a catalog
// item: its project, service type, lifecycle and current state, its
// attribute sets, its labels and the values the user set, the instance
// that realises it and the provider that holds it, and the status the
// lifecycle last applied. The row is written only by internal/lifecycle;
// this package reads it for the domains below, so a change to the table
// finds every reader by the import graph (internal/server/tables_test.go
// holds that no other package's SQL touches it).
//
// # Its identity
//
// An order is named by its id or, when its service type declares an
// identity attribute, by "<service_type>.<attribute>=<value>" (LSM's
// service identity), unique among the type's orders not being deleted.
// [Store.Resolve] turns either into the id, with the check of the type's
// identity attribute passed in ([Config.ServiceType]: the catalog's), so
// that every route taking an order answers the same 404 ([ErrNotFound]).
//
// # The lock facts
//
// A change from below the lifecycle is checked against the order it is
// on: an adapter's report against its generation, and it asks for the
// order's reconcile only while the order is being deleted. [Store.LockTx]
// reads those facts in the change's transaction, holding the order's row
// lock on PostgreSQL, so that the generation cannot move before the change
// commits; another project's order is not there (404, not 403).
//
// # Live counts
//
// A live order is one not in a state its lifecycle marks deleted
// (terminal): a tombstone is kept for a while but counts for nothing. The
// catalog asks how many live orders an item or a service type has before
// removing it ([Store.LiveOfItemTx], [Store.LiveOfTypeTx]), and whether a
// changed schema still accepts every live order's sets
// ([Store.LiveAttributesTx]).
//
// # Attribute sets
//
// An order carries its spec as attribute sets, LSM's candidate, active and
// rollback, and the active set as the user asked it ([Attributes]). A
// transfer's operations move them (statemachine.ApplyOperation); the
// active set is what placement realises.
//
// # Where each behaviour lives
//
//   - internal/lifecycle: creating, updating and deleting orders, their
//     transitions through their lifecycle, their events, hierarchy,
//     deletion gate, tombstones, and the reconcile that applies what
//     happened below; every write of the order.
//   - internal/catalog: the items and service types an order is made from,
//     and its spec built from them.
//   - internal/placement: the order's realisation (resources): policy, the
//     provider chosen, provisioning, updates, rehydration.
//   - internal/sprm: the provider-facing instances of its resources, their
//     status and outputs, resync and cleanup.
//   - internal/adapterstatus: adapters' reports on the order.
//   - internal/repair: the runtime of an order whose type declares one (an
//     app instance, [Store.AppInstance]) and its repair operations.
//   - internal/sentinel: which orders need their adapters to reconcile
//     ([Store.Summaries], [Store.CreatedAfter]).
//   - internal/reconcile: the queue of changes waiting for the order's
//     reconcile.
//   - internal/credentials: its credentials, asked of its provider.
package order
