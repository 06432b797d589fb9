// Package operations owns long-running operations: asynchronous work
// answers 202 with an Operation (DESIGN §4, API.md Operations) that a client
// polls at /api/v1/operations/{id} until `done`, then reads `response` or
// `error`. Rehydration (placement's `:rehydrate` on an order or a resource)
// is the one kind today.
//
// An operation is started in the same transaction as the state change that
// asks for the work, and finished in the same transaction as the state
// change that completes it ([Service.StartTx], [Service.FinishTx]), so an
// operation never claims work that was rolled back, nor stays running for
// work that finished. A request run again after its process died answers
// with the operation its first run started ([Service.ByRequestKey]), not a
// second one. A failed operation's `error` is a problem whose `instance`
// names the operation ([InstanceURN]). Operations belong to a project;
// reads take the project, and lists filter by kind and by done.
//
// The reconcile, repair and restart operations on app instances are not
// these: internal/repair keeps its own, with their steps, at
// …/app-instances/{id}/repair-operations.
package operations
