// Package schema is the JSON Schema toolkit every domain uses (DESIGN §2,
// a leaf): it compiles JSON Schema 2020-12 documents safely (no "$ref"
// leaves the document, nothing is fetched), validates values against them
// with failures named by field path ("spec.vcpu.count",
// "spec.storage.disks[1].name"), knows Steward's own keywords
// ("x-modifier", "x-unique-by"), and reads and writes values at field paths.
//
// Steward's schema keywords, ignored by other validators:
//
//   - "x-modifier": "r" | "rw" | "rw+" on a property (API.md; LSM's attribute
//     modifiers): r is set only by the server or the provider, rw at creation
//     and read-only after (the default), rw+ may also be updated later. Its
//     value is checked when a schema compiles; the lifecycle enforces it.
//   - "x-unique-by": "<property>" on an array: the property's value differs
//     between the array's object items (VM disk names, environment variable
//     names, container ports), which plain JSON Schema cannot say.
//
// Invariants:
//
//   - A schema resolves "$ref" only inside itself. It is never fetched from
//     the network or read from disk, so storing a schema cannot make Steward
//     reach anything.
//   - Validation failures are [invalid.Error] fields named by their path
//     under the root the caller gives. Field paths ([Path]) use the same
//     syntax as these names, so a failure inside a field is named after it.
package schema
