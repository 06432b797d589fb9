// Package bench is Steward's HTTP load generator, behind `steward bench`.
//
// [Run] starts [Config.Concurrency] clients against one target and reports a
// [Result]: how many requests were sent, how they were answered (a count per
// status code), how many failed below HTTP (transport errors: refused
// connections, resets, per-request timeouts), the throughput, and the latency
// distribution (p50, p95, p99, max and mean).
//
// # Closed loop
//
// Each client is a goroutine that sends its next request only when the
// previous one has been answered and its body read. The load is therefore a
// closed loop: throughput ≈ clients / latency, and when the server slows down
// the generator slows down with it. This is not an open-loop generator that
// sends at a fixed arrival rate whatever happens, so it under-reports the
// latency that requests arriving during a stall would see (coordinated
// omission). Use it to find how much a server sustains at a given
// concurrency, and to compare builds, not to model independent users.
//
// # What is measured
//
// A request's latency runs from the moment it is handed to the client to the
// moment its response body has been read to the end: connection set-up when a
// connection must be opened, writing the request, the server's work, and
// reading the whole response. Building the request (and calling
// [Config.RequestFunc]) is not included. Only answered requests have a
// latency; transport errors are counted in [Result.Errors] and nothing else.
// Any status code is an answer: a 503 is counted under 503, not as an error.
//
// Every latency is kept (8 bytes per request, in a slice per client so that
// clients never contend on a lock) and the slices are merged and sorted at the
// end, so the percentiles are exact (nearest rank), not estimates.
//
// An optional warm-up phase runs first for [Config.Warmup]: its requests open
// connections and warm the server's caches and are then forgotten. The
// measured phase reuses its connections.
//
// # Client
//
// All clients share one [net/http.Client] whose transport keeps one
// keep-alive connection per client (HTTP/1.1, idle pool sized to the
// concurrency), asks for no compression, ignores proxy settings and follows
// no redirects (a 3xx is counted as such). Every response body is drained and
// closed so that its connection is reused. Idle connections are closed before
// [Run] returns, so a run leaves no goroutines behind.
package bench
