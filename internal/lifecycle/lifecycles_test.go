package lifecycle

import (
	"testing"

	"github.com/stewardhq/steward/internal/statemachine"
)

// The built-in lifecycles are package statemachine's built-ins, in its
// order, marked built in and read-only; a caller gets a copy.
func TestBuiltin_ListedByIDAndCopied(t *testing.T) {
	t.Parallel()
	machines, lifecycles := statemachine.Builtins(), builtinLifecycles()
	if len(lifecycles) != len(machines) {
		t.Fatalf("%d built-in lifecycles, %d built-in definitions", len(lifecycles), len(machines))
	}
	for i, l := range lifecycles {
		if l.ID != machines[i].ID || !l.Builtin || l.Compact == nil || l.Version != 1 {
			t.Errorf("built-in %d: id %q (want %q), builtin %v, compact %s, version %d",
				i, l.ID, machines[i].ID, l.Builtin, l.Compact, l.Version)
		}
	}
	l, _ := builtin(statemachine.SimpleID)
	l.States[0].Name = "changed"
	if again, _ := builtin(statemachine.SimpleID); again.States[0].Name != "start" {
		t.Error("changing a built-in's copy changed the built-in")
	}
}
