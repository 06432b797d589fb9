package ctl

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// referenceProviders is the command that starts the reference provider of
// each service type the dev catalog orders: what `get items` tells a user
// whose item has no provider to run (issue 46, item 4).
var referenceProviders = map[string]string{
	"container":          "steward provider process",
	"process-cluster":    "steward provider process",
	"namespaced-process": "steward provider process",
	"postgres-database":  "steward provider postgres",
	"container-app":      "steward provider kubernetes",
}

// ReferenceProviders returns, by service type, the command that starts its
// reference provider (for the console, which says the same).
func ReferenceProviders() map[string]string { return maps.Clone(referenceProviders) }

// providersMember is where served annotates an item with its providers,
// for the PROVIDERS column; absent when they could not be read.
const providersMember = "_providers"

// served annotates each catalog item with how many healthy providers serve
// its service type ("2 healthy", "none healthy"), and returns, for the
// items none serves, a note saying so and what starts one. An item that
// looks orderable but has no provider is refused (503). Reading the
// providers is best effort: the table goes on without the column's values.
func (c *conn) served(ctx context.Context, items []object) string {
	providers, err := c.listObjects(ctx, providersKind, listQuery{})
	if err != nil {
		return ""
	}
	healthy := map[string]int{}
	for _, p := range providers {
		if p.str("status") != "healthy" {
			continue
		}
		types, _ := lookup(p.m, "service_types").([]any)
		for _, t := range types {
			if s, ok := t.(string); ok {
				healthy[s]++
			}
		}
	}
	unserved := map[string][]string{} // by service type, the items
	for _, it := range items {
		typ := it.str("service_type")
		if n := healthy[typ]; n > 0 {
			it.m[providersMember] = fmt.Sprintf("%d healthy", n)
			continue
		}
		it.m[providersMember] = "none healthy"
		unserved[typ] = append(unserved[typ], it.str("id"))
	}
	var b strings.Builder
	for _, typ := range slices.Sorted(maps.Keys(unserved)) {
		start := "register a provider of " + typ
		if cmd, ok := referenceProviders[typ]; ok {
			start = "start one: " + cmd
		}
		fmt.Fprintf(&b, "no healthy provider serves %s (%s): an order is refused (503 NO_PROVIDER_AVAILABLE) until one runs; %s\n",
			strings.Join(unserved[typ], ", "), typ, start)
	}
	return b.String()
}

// providersCell is the PROVIDERS column: "-" when the providers could not
// be read (not "<none>", which would say none serves it).
func providersCell(o object, _ time.Time) string {
	if s := o.str(providersMember); s != "" {
		return s
	}
	return "-"
}

// printNote writes note, if any, to w (stderr: stdout stays the table).
func printNote(w io.Writer, note string) {
	if note != "" {
		fmt.Fprint(w, note)
	}
}
