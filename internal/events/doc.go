// Package events carries Steward's domain events: CloudEvents 1.0 in
// structured JSON (content type [ContentType]) on a NATS JetStream stream
// capturing "steward.>". It is the only package that imports NATS or the
// CloudEvents SDK.
//
// It owns:
//
//   - [EmbeddedServer], the in-process NATS server with JetStream that a
//     single-node Steward runs in <data-dir>/nats (an external cluster
//     replaces it for scale);
//   - [Bus], the connection: it ensures the stream, publishes, subscribes
//     durable handlers and answers the health check;
//   - the transactional outbox, the event_outbox table written by
//     [PublishTx] and drained by the [Relay].
//
// # The outbox invariant
//
// A state change and the event announcing it commit together or not at all
// (DESIGN §5). A domain never publishes a state change directly: inside the
// transaction that changes its rows it calls [PublishTx], which inserts the
// event into event_outbox. A rollback takes the event with it. After the
// commit, the relay publishes the row and deletes it. [Bus.Publish] is only
// for events that report no stored change.
//
// # Delivery
//
// Delivery is at least once, deduplicated by event id. The relay publishes
// with the event id as the JetStream message id (Nats-Msg-Id), and deletes a
// row only after the publish is acked; a crash in between, or two replicas'
// relays reading the same row, publishes it twice, and JetStream stores the
// second copy only if it comes after the stream's duplicate window. A
// subscriber acks an event when its handler returns nil, and otherwise gets
// it again after a delay, so handlers must be idempotent, keyed on
// [Event.ID].
//
// # Lifecycle
//
// internal/server starts the embedded server, then the Bus, then the Relay,
// and stops them in reverse.
package events
