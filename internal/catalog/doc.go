// Package catalog owns what users can order (DESIGN §2): service types (the
// typed attribute schemas of the LSM seed) and catalog items (service types
// with defaults and editable fields). Orders made from them belong to the
// lifecycle; the catalog asks about live ones through internal/order
// ([Config.Orders]).
//
// Service types: the ones API.md builds in — vm, container, database and
// cluster — are JSON Schema 2020-12 documents embedded from servicetypes/,
// modelled on DCM's service type definitions in snake_case, and read-only.
// Administrators define more through the API (POST/PUT/DELETE
// /api/v1/service-types), stored in the service_types table. [ServiceTypes]
// is the registry: it compiles each schema once per version and checks
// specs against it for the SP Resource Manager ("spec.service_type names
// the service type whose schema the spec must satisfy"). A stored type is
// checked before it is stored: its schema compiles (schema.Check) with an
// object root, its lifecycle exists (Config.Lifecycles), its parent exists
// without a cycle, its identity attribute is a required rw property. A
// replacement that live orders' stored attributes break, or that changes
// the lifecycle under live orders, is refused; so is a delete while items,
// live orders or child types use the type.
//
// Catalog items (DCM's catalog-item-schema, one resource per item) are
// stored in the catalog_items table and served at /api/v1/catalog-items by
// [Service]. An item names a service type, a defaults spec fragment and
// field configs (path, editable, default, validation_schema).
// [Service.BuildSpec] turns an item and an order's user values into the
// spec the order asks for: defaults ← field defaults ← user values, plus
// service_type, checked against the fields' validation schemas and the
// service type's schema.
//
// Invariants:
//
//   - Built-in schemas are open at every level (additionalProperties true):
//     providers may read fields Steward does not know (API.md).
//   - A spec's own service_type must equal the type it is checked against:
//     every built-in schema requires it and pins it with const.
//   - A schema resolves "$ref" only inside itself. It is never fetched from
//     the network or read from disk, so storing a schema cannot make Steward
//     reach anything. This holds for field validation schemas too.
//   - Validation failures are [invalid.Error] fields named by their path in
//     the request body ("spec.vcpu.count", "spec.storage.disks[1].name",
//     "fields[1].path", "user_values[0].value"), which the HTTP layer
//     answers with 400 INVALID_ARGUMENT. Field paths use the same syntax as
//     these names, so a failure inside a field or a user value is named
//     after it.
//   - A stored catalog item is valid: every value it supplies satisfies its
//     field's validation schema and the service type's schema. Only what is
//     missing (a required property, too few items) may be left to orders,
//     which is why [Service.BuildSpec] checks the whole spec again.
//   - An item's service_type never changes, and an item with live orders is
//     never deleted ([Config.Orders], asked under the item's row lock).
//   - Orders keep the spec they were built with: changing an item changes
//     only later orders (the rehydration seed re-evaluates an order's
//     stored intent, never its catalog item).
//
// Schemas are compiled and checked by the leaf package internal/schema,
// which also defines Steward's keywords ("x-modifier", "x-unique-by").
package catalog
