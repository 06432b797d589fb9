package server

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// Reasons are API: any change to the table shows in review as a change to
// testdata/reasons.golden. Refresh with go test ./internal/server -run Reasons -update.
func TestProblems_ReasonsGolden(t *testing.T) {
	var b strings.Builder
	seen := map[string]int{}
	for _, m := range problems() {
		fmt.Fprintf(&b, "%d %s %s\n", m.Status, m.Reason, m.Title)
		if prev, ok := seen[m.Reason]; ok && prev != m.Status {
			t.Errorf("reason %s maps to both %d and %d", m.Reason, prev, m.Status)
		}
		seen[m.Reason] = m.Status
		if m.Reason != strings.ToUpper(m.Reason) || strings.ContainsAny(m.Reason, " -") {
			t.Errorf("reason %q is not UPPER_SNAKE", m.Reason)
		}
	}
	path := filepath.Join("testdata", "reasons.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != b.String() {
		t.Errorf("problem table changed; if intended, run with -update.\ngot:\n%s\nwant:\n%s", b.String(), want)
	}
}
