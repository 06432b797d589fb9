package ctl

import (
	"fmt"
	"strings"
	"testing"
)

// Issue 46, item 12: an order of an unknown catalog item names it and
// lists the items there are, or from a large catalog the closest ones.
func TestUnknownItemDetail_NamesItAndTheItemsThereAre(t *testing.T) {
	few := []string{"sleeper", "sleeper-cluster", "postgres-small"}
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("vm-%02d", i))
	}
	many = append(many, "small-fedora-vm", "small-fedora-vm-gpu")
	for _, c := range []struct {
		item string
		ids  []string
		want string
	}{
		{"sleepr", few, `no catalog item "sleepr" (did you mean sleeper?); the catalog items are sleeper, sleeper-cluster, postgres-small`},
		{"redis", few, `no catalog item "redis"; the catalog items are sleeper, sleeper-cluster, postgres-small`},
		{"redis", nil, `no catalog item "redis"; the catalog has no items`},
		{"small-fedora", many, `no catalog item "small-fedora"; the closest of the 42 catalog items: small-fedora-vm, small-fedora-vm-gpu (steward get items lists them all)`},
		{"postgres", many, `no catalog item "postgres"; none of the 42 catalog items is close: steward get items lists them`},
	} {
		if got := unknownItemDetail(c.item, c.ids); got != c.want {
			t.Errorf("unknownItemDetail(%q, %d ids):\n got %s\nwant %s", c.item, len(c.ids), got, c.want)
		}
	}
}

// Issue 46, item 12: the unknown-kind message suggests the kind meant and
// lists the short aliases the README uses (orders, items).
func TestFindKind_UnknownSuggestsAndListsAliases(t *testing.T) {
	_, err := findKind("ordrs")
	for _, want := range []string{`unknown kind "ordrs" (did you mean orders?)`, "catalog-item-instances (orders, cii)", "catalog-items (items, ci)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("findKind(ordrs): %v; want it to say %q", err, want)
		}
	}
	if _, err := findKind("zzz"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("findKind(zzz): %v; want no suggestion", err)
	}
}
