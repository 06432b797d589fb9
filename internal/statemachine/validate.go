package statemachine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stewardhq/steward/internal/invalid"
)

// Validate checks the definition and returns nil or an [*invalid.Error]
// naming each bad field by its JSON path (`initial_state`,
// `states[2].model_state`, `transfers[3].target`). Empty labels and a
// resource transfer's empty Error count as their defaults (LabelInfo, the
// source). The rules:
//
//   - initial_state and every source, target and error name a state; state
//     names are unique words (^[a-z][a-z0-9_]*$, at most 63 characters);
//   - model_state, label, validate_self, trigger and the operations take
//     their documented values; a state does not both export and purge,
//     and a deleted state does not export;
//   - validate only on auto and api transfers, which then need an error
//     state; error and error_operation only where the error edge can be
//     taken (validating and resource transfers);
//   - per source state at most one auto, one on_update, one on_delete and
//     one resource transfer, and at most one api transfer per target;
//   - every state is reachable from initial_state along target and error
//     edges, and auto transfers do not form a loop (it would never stop);
//   - promote and rollback can apply somewhere: see the analysis in
//     [checkOperations];
//   - at most MaxStates states and MaxTransfers transfers.
//
// The later checks run only when the earlier ones pass, so one mistake is
// not reported many times.
func (d Definition) Validate() error {
	n := d.normalized()
	var errs invalid.Errors
	if len(n.States) > MaxStates {
		errs.Add("states", "must list at most %d states, not %d", MaxStates, len(n.States))
	}
	if len(n.Transfers) > MaxTransfers {
		errs.Add("transfers", "must list at most %d transfers, not %d", MaxTransfers, len(n.Transfers))
	}
	if err := errs.Err(); err != nil {
		return err
	}
	n.checkStructure(&errs)
	if err := errs.Err(); err != nil {
		return err
	}
	n.checkUnique(&errs)
	n.checkReachable(&errs)
	n.checkAutoLoops(&errs)
	for _, f := range checkOperations(n) {
		errs.Add(f.Field, "%s", f.Message)
	}
	return errs.Err()
}

// normalized returns a copy with the defaults filled in and nil lists made
// empty: what is stored and served.
func (d Definition) normalized() Definition {
	n := Definition{InitialState: d.InitialState, States: slices.Clone(d.States), Transfers: slices.Clone(d.Transfers)}
	if n.States == nil {
		n.States = []State{}
	}
	if n.Transfers == nil {
		n.Transfers = []Transfer{}
	}
	for i := range n.States {
		if n.States[i].Label == "" {
			n.States[i].Label = LabelInfo
		}
	}
	for i := range n.Transfers {
		if t := &n.Transfers[i]; t.Trigger == TriggerResource && t.Error == "" {
			t.Error = t.Source
		}
	}
	return n
}

// checkStructure checks names and values one by one.
func (d Definition) checkStructure(errs *invalid.Errors) {
	if len(d.States) == 0 {
		errs.Add("states", "must list at least one state")
	}
	first := map[string]int{}
	for i, s := range d.States {
		field := fmt.Sprintf("states[%d]", i)
		switch j, dup := first[s.Name]; {
		case !stateNamePattern.MatchString(s.Name):
			errs.Add(field+".name", "must match %s", stateNamePattern)
		case dup:
			errs.Add(field+".name", "state %q is already defined by states[%d]", s.Name, j)
		default:
			first[s.Name] = i
		}
		if s.ModelState == "" {
			errs.Add(field+".model_state", "is required: one of %s", list(modelStates))
		} else if !slices.Contains(modelStates, s.ModelState) {
			errs.Add(field+".model_state", "must be one of %s, not %q", list(modelStates), s.ModelState)
		}
		if !slices.Contains(labels, s.Label) {
			errs.Add(field+".label", "must be one of %s, not %q", list(labels), s.Label)
		}
		if s.ValidateSelf != "" && s.ValidateSelf != SetCandidate && s.ValidateSelf != SetActive {
			errs.Add(field+".validate_self", "must be candidate, active or null, not %q", s.ValidateSelf)
		}
		if s.ExportResources && s.PurgeResources {
			errs.Add(field+".purge_resources", "a state cannot both export and purge its resources")
		}
		if s.ExportResources && s.Deleted {
			errs.Add(field+".export_resources", "a deleted state cannot export resources")
		}
	}
	known := func(field, name string) {
		if _, ok := first[name]; !ok {
			errs.Add(field, "state %q is not defined in states", name)
		}
	}
	if d.InitialState == "" {
		errs.Add("initial_state", "is required")
	} else {
		known("initial_state", d.InitialState)
	}
	for i, t := range d.Transfers {
		d.checkTransfer(errs, fmt.Sprintf("transfers[%d]", i), t, known)
	}
}

func (d Definition) checkTransfer(errs *invalid.Errors, field string, t Transfer, known func(field, name string)) {
	if t.Source == "" {
		errs.Add(field+".source", "is required")
	} else {
		known(field+".source", t.Source)
	}
	if t.Target == "" {
		errs.Add(field+".target", "is required")
	} else {
		known(field+".target", t.Target)
	}
	if t.Trigger == "" {
		errs.Add(field+".trigger", "is required: one of %s", list(triggers))
	} else if !slices.Contains(triggers, t.Trigger) {
		errs.Add(field+".trigger", "must be one of %s, not %q", list(triggers), t.Trigger)
	}
	for _, op := range []struct {
		name string
		op   Operation
	}{{"target_operation", t.TargetOperation}, {"error_operation", t.ErrorOperation}} {
		if op.op != "" && !slices.Contains(allOperations, op.op) {
			errs.Add(field+"."+op.name, "must be null or one of %s, not %q", list(allOperations), op.op)
		}
	}
	if t.Validate && t.Trigger != TriggerAuto && t.Trigger != TriggerAPI {
		errs.Add(field+".validate", "only auto and api transfers can validate, not %s", t.Trigger)
	}
	fails := t.Validate || t.Trigger == TriggerResource
	switch {
	case t.Validate && t.Error == "":
		errs.Add(field+".error", "is required on a validating transfer: where a failed validation goes")
	case t.Error != "" && !fails:
		errs.Add(field+".error", "only a validating or resource transfer can fail; leave it out")
	case t.Error != "":
		known(field+".error", t.Error)
	}
	if t.ErrorOperation != "" && !fails {
		errs.Add(field+".error_operation", "only a validating or resource transfer can fail; leave it out")
	}
}

// checkUnique refuses a second transfer a trigger could not choose from.
func (d Definition) checkUnique(errs *invalid.Errors) {
	type key struct {
		source  string
		trigger Trigger
		target  string
	}
	seen := map[key]int{}
	for i, t := range d.Transfers {
		k := key{source: t.Source, trigger: t.Trigger}
		if t.Trigger == TriggerAPI {
			k.target = t.Target
		}
		j, dup := seen[k]
		switch {
		case !dup:
			seen[k] = i
		case t.Trigger == TriggerAPI:
			errs.Add(fmt.Sprintf("transfers[%d].target", i),
				"state %q already has an api transfer to %q (transfers[%d])", t.Source, t.Target, j)
		default:
			errs.Add(fmt.Sprintf("transfers[%d].trigger", i),
				"state %q already has a transfer triggered by %s (transfers[%d])", t.Source, t.Trigger, j)
		}
	}
}

// checkReachable names the states no order can reach.
func (d Definition) checkReachable(errs *invalid.Errors) {
	from := d.bySource()
	reached := map[string]bool{d.InitialState: true}
	queue := []string{d.InitialState}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, i := range from[s] {
			t := d.Transfers[i]
			for _, next := range []string{t.Target, t.Error} {
				if next != "" && !reached[next] {
					reached[next] = true
					queue = append(queue, next)
				}
			}
		}
	}
	for i, s := range d.States {
		if !reached[s.Name] {
			errs.Add(fmt.Sprintf("states[%d]", i), "state %q is not reachable from initial_state %q", s.Name, d.InitialState)
		}
	}
}

// checkAutoLoops refuses auto transfers that lead back to where they
// started: an order would follow them forever. Validating ones count with
// their error edge, since a validation that keeps failing loops too.
func (d Definition) checkAutoLoops(errs *invalid.Errors) {
	auto := map[string]int{} // source → index of its auto transfer
	for i, t := range d.Transfers {
		if t.Trigger == TriggerAuto {
			auto[t.Source] = i
		}
	}
	const (
		unvisited = iota
		onPath
		done
	)
	color := map[string]int{}
	reported := map[int]bool{}
	var path []string
	var visit func(s string)
	visit = func(s string) {
		color[s] = onPath
		path = append(path, s)
		if i, ok := auto[s]; ok {
			t := d.Transfers[i]
			for _, next := range []string{t.Target, t.Error} {
				switch {
				case next == "":
				case color[next] == onPath && !reported[i]:
					reported[i] = true
					loop := append(slices.Clone(path[slices.Index(path, next):]), next)
					errs.Add(fmt.Sprintf("transfers[%d]", i), "auto transfers loop forever: %s", strings.Join(loop, " -> "))
				case color[next] == unvisited:
					visit(next)
				}
			}
		}
		path = path[:len(path)-1]
		color[s] = done
	}
	for _, s := range d.States {
		if color[s.Name] == unvisited {
			visit(s.Name)
		}
	}
}

// bySource indexes the transfers by source state.
func (d Definition) bySource() map[string][]int {
	from := map[string][]int{}
	for i, t := range d.Transfers {
		from[t.Source] = append(from[t.Source], i)
	}
	return from
}

// list renders allowed values for a message: "auto, api or resource".
func list[T ~string](vs []T) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}
