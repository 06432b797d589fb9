package statemachine

import (
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// The built-in lifecycles' ids.
const (
	// SimpleID is LSM's lsm::fsm::simple: validate, promote, deploy, update,
	// roll back, delete.
	SimpleID = "simple"
	// ServiceID is LSM's lsm::fsm::service: simple with an approval gate
	// (designed) before creating and before an update is deployed.
	ServiceID = "service"
)

// Builtin is a lifecycle Steward ships: its id, its definition, expanded
// and checked, and the compact form it is written in.
type Builtin struct {
	ID string
	Definition
	Compact json.RawMessage
}

// builtinSources holds the built-ins in compact form, one file per id.
//
//go:embed builtin/*.json
var builtinSources embed.FS

// builtins expands and checks the built-ins once, sorted by id. A
// built-in that does not expand or validate is a bug in this package: it
// panics, and every test of the package sees it.
var builtins = sync.OnceValue(func() []Builtin {
	var out []Builtin
	for _, id := range []string{ServiceID, SimpleID} {
		raw, err := builtinSources.ReadFile("builtin/" + id + ".json")
		if err != nil {
			panic(fmt.Sprintf("statemachine: read built-in %q: %v", id, err))
		}
		def, compact, err := Source{Compact: raw}.Expand()
		if err != nil {
			panic(fmt.Sprintf("statemachine: built-in %q: %v", id, err))
		}
		out = append(out, Builtin{ID: id, Definition: def, Compact: compact})
	}
	slices.SortFunc(out, func(a, b Builtin) int { return cmp.Compare(a.ID, b.ID) })
	return out
})

// Builtins returns the built-ins, sorted by id. They are shared: the
// caller must not change them.
func Builtins() []Builtin { return builtins() }
