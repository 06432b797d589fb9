package sentinel

// report is what the sentinel reads of an adapter's latest report.
type report struct {
	adapter    string
	generation int64
	conditions map[string]string // type → status
}

// converged says whether an order's adapters are done with its current
// generation, which is what "ready" means to the sentinel (it publishes
// to make adapters act, so it asks only whether they still have to):
//
//   - not deleting: every required adapter reported Available=True at the
//     order's generation;
//   - deleting: every adapter that ever reported confirmed its cleanup at
//     the order's generation (Applied=False and Health=True, DESIGN §4's
//     gate; the delete bumped the generation, so an older report does not
//     count), or reported Finalized=True. A deleting order that no adapter
//     reported on is converged only when its type requires none.
func converged(deleting bool, generation int64, required []string, reports []report) bool {
	if !deleting {
		byName := make(map[string]report, len(reports))
		for _, r := range reports {
			byName[r.adapter] = r
		}
		for _, name := range required {
			r, ok := byName[name]
			if !ok || r.generation != generation || r.conditions["Available"] != "True" {
				return false
			}
		}
		return true
	}
	if len(reports) == 0 {
		return len(required) == 0
	}
	for _, r := range reports {
		if r.conditions["Finalized"] == "True" {
			continue
		}
		if r.generation != generation || r.conditions["Applied"] != "False" || r.conditions["Health"] != "True" {
			return false
		}
	}
	return true
}

// adaptersView is resource.adapters in the decision's variables.
func adaptersView(reports []report) map[string]any {
	m := make(map[string]any, len(reports))
	for _, r := range reports {
		cs := make(map[string]any, len(r.conditions))
		for t, s := range r.conditions {
			cs[t] = s
		}
		m[r.adapter] = map[string]any{"observed_generation": r.generation, "conditions": cs}
	}
	return m
}
