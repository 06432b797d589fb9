// Package crashtest kills the real Steward binary with SIGKILL under load
// and checks that nothing acknowledged was lost (issue 8, section 1).
//
// [Run] is one trial. It starts `steward server --dev` as a child process on
// a fresh SQLite data dir or a fresh PostgreSQL schema, serves an in-memory
// provider from the calling process (so it outlives every kill), registers
// it and creates a catalog item of the built-in `container` type through the
// API. Then several clients order, rehydrate, rotate credentials and
// delete, each request with an Idempotency-Key (DELETE carries none: it is
// idempotent by itself), and each retried with the SAME key until it gets
// a final answer. Meanwhile the
// server is killed at random moments and restarted at once on the same data
// and port. When the load stops, the trial polls until the invariants hold
// or a deadline passes, and reports every violation by order, key and
// instance:
//
//   - every acknowledged order create exists exactly once, under the id it
//     was acknowledged with (each create is labelled with its key, so a key
//     that made two orders shows);
//   - each live order is up, and its current instance is held by the
//     provider;
//   - that instance holds the data its order's first instance was made
//     with (the provider registers export, so every rehydration copies the
//     data, and one copy in five fails), and takes writes;
//   - every other instance the provider holds has a cleanup task;
//   - no cleanup task stays claimed by a killed process (a claim older than
//     the last kill can be no one else's);
//   - every acknowledged deletion reaches the provider (none of the order's
//     instances is held any more), and the order ends terminated;
//   - every Idempotency-Key gets its final answer (a 409
//     IDEMPOTENCY_KEY_IN_USE is not one), and sending it again replays that
//     answer with Idempotent-Replayed;
//   - every Operation is done;
//   - a rotation of credentials reaches the provider once when it
//     succeeded, and never twice;
//   - no final answer is a 5xx.
//
// Clients also update orders (a PATCH of a label, without a key: setting a
// value is idempotent by itself), and each order must end holding what its
// last acknowledged update set; no instance may be made twice at the
// provider (created again after its deletion).
//
// # Cluster trials
//
// With Config.Replicas above 1 (issue 28), the trial runs that many servers
// on one PostgreSQL schema and a three-node JetStream cluster of real
// nats-server processes (Steward's stream on R3). Each client sends to its
// own replica and moves on to the next when a request gets no answer, as
// behind a load balancer; the provider reports to all of them the same
// way. The load is Config.Orders creates with the usual mix, and meanwhile
// the trial kills River's leader replica (SIGKILL) and measures the time
// until its peers reaped it (its jobs and keys handed back) and a live
// replica leads; kills the NATS node leading the stream and measures the
// time to a new leader; stops another replica with SIGTERM; each is started
// again. Beyond every invariant above it checks, from the database and the
// stream, that no periodic job (a singleton) ran on two processes at once,
// nor the sentinel's cycles (the replicas' reconcile events, told apart by
// their source, come from one replica at a time), that the outbox is empty
// and no event is in the stream twice.
//
// # Final answers
//
// A transport error, a 409 IDEMPOTENCY_KEY_IN_USE and a 5xx that was not
// replayed are retried with the same key; anything else is final. A create
// with ?id= retried after a lost answer may be answered 409 ORDER_EXISTS
// when the first attempt committed but its answer was not recorded: that is
// a correct final answer, and the order counts as acknowledged (it must then
// exist exactly once). The same answer to a first attempt is reported.
//
// # Not here
//
// The server binary is built by the caller, without -race ([Build] does it
// from a module checkout). Trials run one after the other: they measure
// recovery times, which a second trial on the same cores would distort.
package crashtest
