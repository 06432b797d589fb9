package status

// ConditionRehydrating is present while a rehydration of the order runs
// that carries the data from its current instance to a new one.
const ConditionRehydrating = "Rehydrating"

// ReasonCopyingData is the reason of the Rehydrating condition: the data
// is being copied, and the current instance takes no writes until it ends.
const ReasonCopyingData = "CopyingData"

// CopyingData is the order's Rehydrating condition while the data of its
// current instance is copied to newInstanceID. ok is false for a removed
// order.
func CopyingData(o Order, newInstanceID string) (c Condition, ok bool) {
	if o.Terminal {
		return Condition{}, false
	}
	return Condition{Type: ConditionRehydrating, Status: True, Reason: ReasonCopyingData,
		Message: "copying the data to the new instance " + newInstanceID +
			"; the current instance takes no writes until the copy ends"}, true
}
