// Package sprm is the SP Resource Manager (seed sp-resource-manager.txt, and
// the deferred deletion of rehydration-flow.txt). It owns:
//
//   - the service registry: providers register by name, and a health
//     monitor moves each one healthy → degraded → unavailable and back;
//   - service-type instances: the provider-facing record of each resource,
//     created, deleted and followed through provider status reports;
//   - the cleanup queue: deletions that must happen on a provider later
//     (deferred deletes, and any create whose outcome Steward cannot know).
//
// Invariant: a row never says one thing while the provider holds another.
// A create records its intent (status PENDING) before calling the provider,
// then records the outcome. A refusal removes the intent; an unknown outcome
// (timeout, connection lost, or the outcome could not be recorded) queues a
// cleanup task, so whatever the provider may have made is deleted rather
// than orphaned. A sweep on start (and periodically) queues cleanup for
// intents whose request died with its process.
//
// Status reports (HTTP PUT or CloudEvents on steward.status.<service_type>)
// go through one function, [Service.ApplyStatus]. A report older than the
// last one applied is ignored. Because the intent row exists before the
// provider hears of the instance, a report can never arrive for an instance
// Steward does not know yet (DCM's control-plane#44); a report for an
// unknown id on NATS is still retried for a while rather than dropped.
package sprm
