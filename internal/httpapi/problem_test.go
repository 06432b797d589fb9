package httpapi

import "testing"

// Issue 22, item 16: a not-found detail names the id.
func TestNamedNotFound(t *testing.T) {
	for _, tc := range [][4]string{
		{"order not found", "order not found", "x", `order "x" not found`},
		{`lifecycle "x": lifecycle not found`, "lifecycle not found", "x", `lifecycle "x" not found`},
		{"order not found: y is neither an id nor …", "order not found", "x", "order not found: y is neither an id nor …"},
		{"order not found", "order not found", "", "order not found"},
		{"app instance not found: x", "app instance not found", "x", `app instance "x" not found`},
	} {
		if got := namedNotFound(tc[0], tc[1], tc[2]); got != tc[3] {
			t.Errorf("namedNotFound(%q, %q, %q) = %q, want %q", tc[0], tc[1], tc[2], got, tc[3])
		}
	}
}
