// Package adapterstatus stores the status reports adapters make on orders
// (deletion-flow seed; API.md "Adapter status"): for each order and adapter
// the latest report, with its Applied, Available and Health conditions, the
// generation and time it observed, and adapter data. A report older than
// the stored one, for a generation the order is past or has not reached,
// or observed in the future, is discarded, so a late or replayed report
// can never open the deletion gate (the stale-report hole that made
// HyperFleet drop its gate). The gate and the Ready aggregation read the
// stored reports through [Service.AllTx].
package adapterstatus
