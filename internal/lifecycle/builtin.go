package lifecycle

import (
	"cmp"
	"embed"
	"fmt"
	"slices"
	"sync"
	"time"
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

// builtinTime is the create_time and update_time of the built-ins, which
// are not stored: the day they shipped, as for the built-in service types
// (the Unix epoch showed as an AGE of 20783d).
var builtinTime = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

// builtinSources holds the built-ins in compact form, one file per id.
//
//go:embed builtin/*.json
var builtinSources embed.FS

// builtinLifecycles expands and checks the built-ins once, sorted by id. A
// built-in that does not expand or validate is a bug in this package: it
// panics, and every test of the package sees it.
var builtinLifecycles = sync.OnceValue(func() []Lifecycle {
	var out []Lifecycle
	for _, id := range []string{ServiceID, SimpleID} {
		raw, err := builtinSources.ReadFile("builtin/" + id + ".json")
		if err != nil {
			panic(fmt.Sprintf("lifecycle: read built-in %q: %v", id, err))
		}
		def, compact, err := Source{Compact: raw}.definition()
		if err != nil {
			panic(fmt.Sprintf("lifecycle: built-in %q: %v", id, err))
		}
		out = append(out, Lifecycle{ID: id, Definition: def, Compact: compact, Builtin: true, Version: 1,
			CreateTime: builtinTime, UpdateTime: builtinTime})
	}
	slices.SortFunc(out, func(a, b Lifecycle) int { return cmp.Compare(a.ID, b.ID) })
	return out
})

// builtin returns a copy of the built-in lifecycle with the id.
func builtin(id string) (Lifecycle, bool) {
	for _, l := range builtinLifecycles() {
		if l.ID == id {
			return l.clone(), true
		}
	}
	return Lifecycle{}, false
}

// clone copies the lists, so a caller may change what it got.
func (l Lifecycle) clone() Lifecycle {
	l.States = slices.Clone(l.States)
	l.Transfers = slices.Clone(l.Transfers)
	l.Compact = slices.Clone(l.Compact)
	return l
}
