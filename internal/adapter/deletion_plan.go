package adapter

import (
	"fmt"
	"slices"
	"strings"
)

// The deletion order comes from each resource's delete_options.after: a
// resource is deleted only once every resource it comes after is gone.
// The graph is checked twice: by Parse, so a YAML config with a cycle or
// an unknown name never starts, and by Execute in deletion mode, because a
// Config built in Go skips Parse. At execution a bad graph deletes nothing
// and is reported on the order (Health=False, InvalidDeletionOrder or
// InvalidDeletionConfig), as the deletion-flow seed asks: deleting in a
// guessed order could remove a namespace before the objects whose cleanup
// needs it.

// unknownRef is a resource whose after names resources that do not exist.
type unknownRef struct {
	index    int
	resource string
	unknown  []string
}

// deletionGraph is the after relation by resource index.
type deletionGraph struct {
	names []string
	after [][]int // after[i]: the resources i waits for, by index
}

// graphFaults is everything wrong with a deletion graph.
type graphFaults struct {
	unknown []unknownRef
	self    []int      // resources that come after themselves
	cycles  [][]string // each cycle as names, first name repeated at the end
}

func (f graphFaults) ok() bool { return len(f.unknown) == 0 && len(f.self) == 0 && len(f.cycles) == 0 }

// buildDeletionGraph resolves after names to indexes and finds every
// fault. Names resolve to the first resource of that name.
func buildDeletionGraph(names []string, after [][]string) (deletionGraph, graphFaults) {
	g := deletionGraph{names: names, after: make([][]int, len(names))}
	var f graphFaults
	index := map[string]int{}
	for i, n := range names {
		if _, dup := index[n]; !dup {
			index[n] = i
		}
	}
	for i, deps := range after {
		var unknown []string
		for _, d := range deps {
			j, ok := index[d]
			switch {
			case !ok:
				unknown = append(unknown, d)
			case j == i:
				if !slices.Contains(f.self, i) {
					f.self = append(f.self, i)
				}
			case !slices.Contains(g.after[i], j):
				g.after[i] = append(g.after[i], j)
			}
		}
		if len(unknown) > 0 {
			f.unknown = append(f.unknown, unknownRef{index: i, resource: names[i], unknown: unknown})
		}
	}
	f.cycles = g.cycles()
	return g, f
}

// cycles finds the cycles of g (self edges excluded) by depth-first search
// in declaration order; each back edge closes one cycle.
func (g deletionGraph) cycles() [][]string {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(g.names))
	var stack []int
	var found [][]string
	seen := map[string]bool{}
	var visit func(i int)
	visit = func(i int) {
		color[i] = grey
		stack = append(stack, i)
		for _, j := range g.after[i] {
			switch color[j] {
			case white:
				visit(j)
			case grey:
				start := slices.Index(stack, j)
				cyc := append(slices.Clone(stack[start:]), j)
				key := cycleKey(cyc)
				if !seen[key] {
					seen[key] = true
					names := make([]string, len(cyc))
					for k, n := range cyc {
						names[k] = g.names[n]
					}
					found = append(found, names)
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
	}
	for i := range g.names {
		if color[i] == white {
			visit(i)
		}
	}
	return found
}

// cycleKey identifies a cycle whatever node it starts at.
func cycleKey(cyc []int) string {
	nodes := slices.Clone(cyc[:len(cyc)-1])
	m := slices.Index(nodes, slices.Min(nodes))
	nodes = append(nodes[m:], nodes[:m]...)
	return fmt.Sprint(nodes)
}

// order returns the resource indexes with every resource after the ones
// it waits for, keeping declaration order among ready ones. It reports
// false if g has a cycle (callers check the faults first).
func (g deletionGraph) order() ([]int, bool) {
	done := make([]bool, len(g.names))
	out := make([]int, 0, len(g.names))
	for len(out) < len(g.names) {
		progressed := false
		for i := range g.names {
			if done[i] {
				continue
			}
			ready := true
			for _, j := range g.after[i] {
				ready = ready && done[j]
			}
			if ready {
				done[i] = true
				out = append(out, i)
				progressed = true
			}
		}
		if !progressed {
			return out, false
		}
	}
	return out, true
}

// deletionGraphProblems reports the faults of cfg's deletion graph at
// load, each at the after field of the resource concerned.
func deletionGraphProblems(resources []Resource) []Problem {
	names, after := deletionInputs(resources)
	_, f := buildDeletionGraph(names, after)
	var ps problems
	field := func(i int) string { return fmt.Sprintf("resources[%d].delete_options.after", i) }
	for _, u := range f.unknown {
		ps.add(field(u.index), "resource %q comes after %s, which %s not declared", u.resource,
			quoteList(u.unknown), map[bool]string{true: "is", false: "are"}[len(u.unknown) == 1])
	}
	for _, i := range f.self {
		ps.add(field(i), "resource %q comes after itself", names[i])
	}
	for _, c := range f.cycles {
		ps.add(field(slices.Index(names, c[0])), "cycle: %s", strings.Join(c, " → "))
	}
	return ps
}

func deletionInputs(resources []Resource) ([]string, [][]string) {
	names := make([]string, len(resources))
	after := make([][]string, len(resources))
	for i, r := range resources {
		names[i], after[i] = r.Name, r.DeleteOptions.After
	}
	return names, after
}

// describe words faults for a report: the unknown references, or the
// cycles (a resource after itself is the cycle "a → a").
func (f graphFaults) describe(names []string) (reason, message string) {
	if len(f.unknown) > 0 {
		parts := make([]string, len(f.unknown))
		for i, u := range f.unknown {
			parts[i] = fmt.Sprintf("resource %q comes after unknown resource %s", u.resource, quoteList(u.unknown))
		}
		return ReasonInvalidDeletionConfig, "invalid delete_options.after, nothing deleted: " + strings.Join(parts, "; ")
	}
	var parts []string
	for _, i := range f.self {
		parts = append(parts, names[i]+" → "+names[i])
	}
	for _, c := range f.cycles {
		parts = append(parts, strings.Join(c, " → "))
	}
	return ReasonInvalidDeletionOrder, "cycle detected in delete_options.after, nothing deleted: " + strings.Join(parts, "; ")
}
