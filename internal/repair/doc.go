// Package repair owns app instances' runtimes and the reconcile, repair and
// restart operations on them (the runtime-reconcile-repair seed).
//
// An app instance is an order whose service type declares a runtime. Its
// provider reports the runtime (members with roles, health, whether quorum
// is safe); the core decides from that topology whether a destructive
// repair is allowed, and refuses one that is not proven safe with a stable
// reason and the next safe action. An allowed request becomes an operation
// row, written with its audit record and its delivery job in one
// transaction. The job hands the operation to the provider with a worker
// token bound to that operation alone; the worker reports step by step
// until the operation succeeds or fails. A failed repair never fails the
// order: it changes the runtime's reported health, nothing else.
package repair
