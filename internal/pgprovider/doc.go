// Package pgprovider is the PostgreSQL service provider (`steward provider
// postgres`): it realises orders of the built-in service type
// postgres-database as a database and its owning LOGIN role on a
// PostgreSQL server that Steward does not own, reached through an admin
// URL whose role may create databases and roles.
//
// Every create is idempotent by instance id. The role carries the
// instance id in its comment, written in the transaction that creates it,
// and the database is created owned by that role, so a replayed create (or
// one that died between CREATE DATABASE and its answer) finds what it made
// and finishes it, never making a second database; the database then
// carries the same comment, by which Get and Delete find it.
//
// The owner's password is never stored: it is derived from a secret key
// of the provider's own (--secret-file) and the instance id, and the role
// is given its SCRAM-SHA-256 verifier, computed here, so the password
// itself never reaches the server or its statement log.
package pgprovider
