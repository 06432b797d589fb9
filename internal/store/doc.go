// Package store opens Steward's database, SQLite (the embedded default) or
// PostgreSQL (for several replicas), runs the embedded migrations under a lock,
// and gives domains one engine-neutral way to run their queries.
//
// Domains keep their SQL in .sql files, one directory per engine, loaded with
// [LoadQueries]; cmd querygen (internal/store/querygen, docs/queries.md)
// generates a typed method per query over them. They run statements through
// a [Querier]: the [DB] for a single
// read, or the [Tx] handed to [DB.InTx] when several writes, jobs or events must
// commit together (the outbox rule of DESIGN §5).
//
// The store hides the engines' differences that would otherwise leak into every
// domain: time.Time and json.RawMessage arguments and scan targets work on both
// (SQLite keeps times as fixed-width UTC text so that they sort as text), a
// value for a JSON column is passed as [JSON](v), [Now] gives times both
// engines keep exactly, and driver errors become [ErrNotFound],
// [ErrAlreadyExists] or [ErrStale].
package store
