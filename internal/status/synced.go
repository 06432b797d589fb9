package status

import (
	"strings"
	"time"
)

// ConditionSynced says whether an order's instance, as its provider last
// compared it with its spec, matches it (drift).
const ConditionSynced = "Synced"

// The reasons of the Synced condition.
const (
	ReasonInSync  = "InSync"
	ReasonDrifted = "Drifted"
)

// Sync is a provider's last comparison of an order's instance with its
// spec.
type Sync struct {
	InSync       bool
	Differences  []string
	ObservedTime time.Time
}

// Synced is the order's Synced condition: True/InSync, or False/Drifted
// with each difference in the message. ok is false for an order whose
// provider never compared (most providers do not), and for a removed one.
func Synced(o Order, s *Sync) (c Condition, ok bool) {
	if s == nil || o.Terminal {
		return Condition{}, false
	}
	if s.InSync {
		return Condition{Type: ConditionSynced, Status: True, Reason: ReasonInSync, LastTransitionTime: s.ObservedTime}, true
	}
	return Condition{Type: ConditionSynced, Status: False, Reason: ReasonDrifted,
		Message: strings.Join(s.Differences, "; "), LastTransitionTime: s.ObservedTime}, true
}
