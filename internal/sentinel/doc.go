// Package sentinel decides which orders need reconciling and publishes a
// reconcile event for each (deletion-flow seed: "Sentinel"; HyperFleet's
// sentinel, with its gaps closed).
//
// A cycle runs every Interval. A query finds the candidates among the
// orders of the watched service types (those with required adapters, plus
// any configured): orders new to the sentinel, changed since it last
// evaluated them (the order row, its generation, or any adapter report),
// not ready once Debounce has passed since the last publish, or not
// published for MaxAge. Orders that are none of these are never read, so a
// quiet inventory of 100,000 orders costs one indexed scan, not 100,000
// decisions. The message_decision ([Decision], CEL) then decides each
// candidate; "ready" means the order's adapters are done with its current
// generation (see converged).
//
// For each order to publish, the sentinel records the publish in
// sentinel_marks and writes the CloudEvent (type and subject
// steward.reconcile.<service_type>, data [EventData]) to the outbox in the
// same transaction; the relay publishes it to JetStream. The mark is
// written only if it is still what the sentinel read (compare and set on
// published_time), so several sentinels, in one process or many, never
// publish the same decision twice: the one that loses the race publishes
// nothing. A crash loses nothing either: an event is in the outbox exactly
// when its mark says it was published.
//
// The sentinel runs in-process in `steward server` and alone as
// `steward sentinel`. In a server it runs cycles only while Config.Leads
// says so (River's elected leader): the cycles are a singleton, so replicas
// do not each query for the same due orders; the compare and set keeps a
// stale leader's last cycle, or a `steward sentinel` beside, harmless.
package sentinel
