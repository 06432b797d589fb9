package status

import (
	"fmt"
	"strings"
)

// DeletionGate says what deleting order o's removal still waits for now
// that its resource is gone (DESIGN §4), "" when nothing. The gate opens
// when every adapter that ever reported on it has a latest report at the
// deletion's generation with Finalized=True, or with Applied=False,
// Health=True and an observation made at or after deleted_at (see
// [AdapterHold]); every required adapter has reported; and no child order
// remains that is not removed (childrenLeft). Health=False holds it with
// the adapter's reason.
//
// The service type's required adapters count even when they never
// reported: one that took its work but failed to report it (the seed's
// review: an adapter that ACKs a message, then fails to POST its status)
// would otherwise leave its resources behind a removed order. An adapter
// that will never report again is what :forceDelete is for.
func DeletionGate(o Order, a Adapters, childrenLeft bool) (waitingFor string) {
	var held []string
	reported := make(map[string]bool, len(a.Reports))
	for _, r := range a.Reports {
		reported[r.Adapter] = true
		if why := AdapterHold(o, r); why != "" {
			held = append(held, why)
		}
	}
	for _, name := range a.Required {
		if !reported[name] {
			held = append(held, fmt.Sprintf("adapter %s, required by service type %s, to report its cleanup",
				name, o.ServiceType))
		}
	}
	if childrenLeft {
		// No count: the gate is checked again only once the last child
		// goes, so a number here would go stale (list them with
		// ?parent_id=).
		held = append(held, fmt.Sprintf("its child orders to be removed first (list them with ?parent_id=%s)", o.ID))
	}
	return strings.Join(held, "; ")
}

// AdapterHold says why adapter report r holds o's deletion, "" when it
// does not. A report of an earlier generation is stale: it may predate
// the delete, whatever its observed time says (the hole that made
// HyperFleet drop this gate).
func AdapterHold(o Order, r Report) string {
	switch {
	case r.ObservedGeneration != o.Generation:
		return fmt.Sprintf("adapter %s to report on the deletion (generation %d; its last report is of %d)",
			r.Adapter, o.Generation, r.ObservedGeneration)
	case r.Finalized.Status == True:
		return ""
	case r.Health.Status == False:
		return fmt.Sprintf("adapter %s, which reports Health=False (%s)", r.Adapter, r.Health.why())
	case r.Applied.Status != False || r.Health.Status != True:
		return fmt.Sprintf("adapter %s to report Applied=False and Health=True", r.Adapter)
	case o.DeletedAt != nil && r.ObservedTime.Before(*o.DeletedAt):
		return fmt.Sprintf("adapter %s to report an observation made after the deletion", r.Adapter)
	}
	return ""
}
