// Package live tells every replica, within a fraction of a second, which
// orders changed, so that pages showing them (the console's) can be
// refreshed without polling the store.
//
// The lifecycle calls [Feed.Changed] once a transaction that changed an
// order commits. The Feed gathers the ids for a short interval and sends
// them as one notice on the event bus (core NATS, kept nowhere); every
// replica's Feed listens and hands them to its [Watcher]s. A notice may be
// lost (a replica reconnecting, a slow listener): it is a hint to read the
// store again, never the state itself.
package live
