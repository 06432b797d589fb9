// Package status holds DESIGN's status rules as pure functions over its own
// input types: an order's Ready condition (from its lifecycle state, its
// resource's status and its required adapters' reports), its Healthy
// condition (from its runtime), and the two-phase deletion gate (the
// deletion-flow seed; DESIGN §4), which says what an order's removal
// still waits for.
//
// It reads nothing and stores nothing: package lifecycle reads the order,
// the adapter reports and the runtime, fills in [Order], [Adapters] and
// [Runtime], and calls down. So each rule is tested on its own, case by
// case, and a reader finds it by its domain's name. Lifecycle also decides
// what is worth reading: the reports only when Ready could be True and the
// service type requires adapters, the runtime only for a type that has one.
package status
