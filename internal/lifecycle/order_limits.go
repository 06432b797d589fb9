package lifecycle

import (
	"encoding/json"
	"fmt"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/limits"
)

// checkCreateLimits checks the bounds of what a create sets (docs/api.md,
// Limits). The OpenAPI document bounds them for a request already; an
// order is checked here whoever makes it, and a label key's form is a rule
// the document cannot state.
func checkCreateLimits(errs *invalid.Errors, p CreateOrderParams) {
	limits.CheckLength(errs, "display_name", p.DisplayName, limits.MaxDisplayName)
	limits.CheckLabels(errs, "labels", p.Labels)
}

// checkPatchLimits is checkCreateLimits for a PATCH: the labels it sets
// (the labels it leaves are counted once merged: see mergedLabelsProblem).
func checkPatchLimits(patch OrderPatch) error {
	var errs invalid.Errors
	if patch.DisplayName != nil {
		limits.CheckLength(&errs, "display_name", *patch.DisplayName, limits.MaxDisplayName)
	}
	limits.CheckLabelPatch(&errs, "labels", patch.Labels)
	return errs.Err()
}

// mergedLabelsProblem refuses a PATCH whose labels, merged with the
// order's, pass limits.MaxLabels; an order that had more before the bound
// may still lose some.
func mergedLabelsProblem(before, after map[string]string) error {
	if len(after) > limits.MaxLabels && len(after) > len(before) {
		return invalid.New("labels", "must leave the order at most %d labels, not %d", limits.MaxLabels, len(after))
	}
	return nil
}

// checkSpecSize refuses a spec that passes limits.MaxSpecBytes encoded,
// naming field, what built it. The document bounds the values an order
// sends by count and by the body's size; the spec they build, with the
// catalog item's defaults, is bounded here, so that an order's attribute
// sets stay a small part of a list page (store.MaxPageBytes).
func checkSpecSize(field string, spec map[string]any) error {
	b, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("encode the spec: %w", err)
	}
	if len(b) > limits.MaxSpecBytes {
		return invalid.New(field, "make a spec of %d bytes of JSON; an order's spec is at most %d bytes (256 KiB)",
			len(b), limits.MaxSpecBytes)
	}
	return nil
}
