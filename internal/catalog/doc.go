// Package catalog owns what users can order (DESIGN §2): service types (the
// typed attribute schemas of the LSM seed), catalog items (service types with
// defaults and editable fields) and catalog item instances (orders), with the
// mapping from an order to its current instance and the :rehydrate trigger.
//
// This part ships the service types API.md builds in — vm, container,
// database and cluster — as JSON Schema 2020-12 documents embedded from
// servicetypes/, modelled on DCM's service type definitions in snake_case.
// [ServiceTypes] is the registry: it compiles each schema once and checks
// specs against it for the SP Resource Manager ("spec.service_type names the
// service type whose schema the spec must satisfy"). Stored service types,
// catalog items and orders join it in later issues; [Compile] is the check a
// stored type's schema will pass first.
//
// Invariants:
//
//   - Built-in schemas are open at every level (additionalProperties true):
//     providers may read fields Steward does not know (API.md).
//   - A spec's own service_type must equal the type it is checked against:
//     every built-in schema requires it and pins it with const.
//   - A schema resolves "$ref" only inside itself. It is never fetched from
//     the network or read from disk, so storing a schema cannot make Steward
//     reach anything.
//   - Validation failures are [invalid.Error] fields named by their path in
//     the request body ("spec.vcpu.count", "spec.storage.disks[1].name"),
//     which the HTTP layer answers with 400 INVALID_ARGUMENT.
//
// Steward's schema keywords, ignored by other validators:
//
//   - "x-modifier": "r" | "rw" | "rw+" on a property (API.md; LSM's attribute
//     modifiers): r is set only by the server or the provider, rw at creation
//     and read-only after (the default), rw+ may also be updated later. Its
//     value is checked when a schema compiles; the order flow enforces it.
//   - "x-unique-by": "<property>" on an array: the property's value differs
//     between the array's object items (VM disk names, environment variable
//     names, container ports), which plain JSON Schema cannot say.
package catalog
