// Package audit owns the audit log (API.md, Audit): who did what to which
// target, in which project, with which outcome, and the request it came
// in. Every mutating HTTP request gets one record, written in the
// transaction of the change it makes (through a store.TxHook the HTTP
// layer puts on the request's context), or on its own when the request
// changed nothing or failed. Domains may refine a request's record (the
// target of a create whose id the server chose, details such as a force
// delete's reason) with Describe, and write records of their own events
// with WriteTx. Records are only inserted: no API changes or deletes them.
package audit
