// Package operations owns long-running operations: every asynchronous call
// answers 202 with an Operation (DESIGN §4, API.md Operations) that a client
// polls at /api/v1/operations/{id} until `done`, then reads `response` or
// `error`.
//
// An operation is started in the same transaction as the state change that
// asks for the work, and finished in the same transaction as the state
// change that completes it ([Service.StartTx], [Service.FinishTx]), so an
// operation never claims work that was rolled back, nor stays running for
// work that finished. Operations belong to a project; reads take the project.
//
// Reconcile/repair operations with steps (the repair seed) build on this in
// their own issue.
package operations
