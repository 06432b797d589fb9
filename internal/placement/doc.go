// Package placement is the Placement Manager of the rehydration seed
// (rehydration-flow.txt). It owns resources: one per instance id, holding
// the original intent (the spec built from the catalog item and the user's
// values, exactly as ordered), the validated request (that spec after the
// policy chain: what the provider gets) and the provider chosen. A
// resource's status is its instance's, read from the SPRM's record, unless
// placement decided it (outcome: a create given up, nothing left to delete).
//
// [Service.Place] runs the policy chain and picks a provider when no policy
// selected one (policy.PickProvider: healthy, serving the service type,
// allowed by the policies, with capacity left; fewest live instances, then
// name). [Service.RecordTx] stores the resource in the order's transaction
// and, in the same transaction, queues the River job that asks the SPRM to
// create the instance, so an order that commits is always provisioned and
// one that rolls back never is. The job uses the instance id as the SPRM id,
// so a retry after a crash finds the instance (sprm.ErrInstanceExists) and
// never provisions twice. Only transient failures (provider unavailable,
// store errors) are retried, a bounded number of times; a refusal, or a
// create whose outcome is unknown (the SPRM queued it for cleanup), marks
// the resource and the order FAILED.
//
// [Service.DeleteTx] marks a resource deleted in the caller's transaction
// and queues the job that deletes the instance through the SPRM.
//
// Status flows one way (DESIGN §2). Placement is told nothing by the SPRM
// and calls nothing above it: what it decides about an order's resource (a
// create given up, an update's outcome, a replacement done or failed) it
// records as a reconcile.Change for the order (Config.Changes), in the
// transaction that decides it, and the lifecycle's reconcile of the order
// acts on it.
//
// [Service.UpdateTx] realises a new intent of an order: in place when the
// placement keeps the provider and it registered the "update" operation
// (the placement.update job sends sprm.Update and records the update's
// outcome, reconcile.KindUpdated), else as a replacement through the
// rehydration job below (no operation; KindReplacementFailed if it fails).
//
// [Service.Rehydrate] (POST /api/v1/resources/{instance_id}:rehydrate, and
// the order's :rehydrate through it) re-runs today's policy chain on the
// resource's ORIGINAL intent; a rejection is noted on the resource
// (last_rehydration) and recorded as a failed operation, nothing else
// changes. Otherwise one transaction stores the new resource (same
// original_request, rehydration_status RUNNING: a unique partial index
// allows one per order), starts the "rehydrate" operation and queues the
// placement.rehydrate job. The job creates the new instance through the
// SPRM (a retry finds it, sprm.ErrInstanceExists) and follows it; only once
// it is RUNNING does it record the replacement for the order
// (reconcile.KindReplaced), so the order is never left without a running
// instance (rehydration seed). The order's reconcile then, in one
// transaction, repoints the order, retires the old resource
// ([Service.CompleteReplacementTx]: soft-removed, its instance's deletion
// deferred to the cleanup queue) and finishes the operation. Until then the
// order's current resource is the old one, so status changes of the new
// instance do not move the order. A failed create finishes the operation
// with the error and leaves the old resource current; so does a new
// instance that fails, goes, or is not RUNNING within Config.CopyTimeout
// ([ErrNewInstanceFailed]), and its deletion is queued in the same
// transaction.
//
// When the old and the new instance's providers both registered the export
// operation, the rehydration carries the data (rehydrate_copy.go): the old
// instance stops taking writes, the new one is created with the export as
// its source, and the new instance RUNNING means the copy is done; a copy
// that fails (or outlasts Config.CopyTimeout) fails the operation with [ErrCopyFailed], queues the new instance's deletion and,
// in the same transaction, the job that opens the old one to writes again.
package placement
