// Package limits holds the bounds of what clients set: the lengths of
// names, display names and texts, and the rules of labels, as Kubernetes
// bounds its own (issue 45, finding 8). api/openapi.yaml states each bound
// where a request carries the value, so the HTTP layer refuses a request
// past one before any domain sees it; the domains check them again with
// this package where the document cannot say them (a label key's form, a
// count after DCM's metadata is flattened, a spec's encoded size) and
// where a value comes by another way than a request body (a status report
// over NATS, the dev catalog). docs/api.md, "Limits", lists them all.
package limits

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/invalid"
)

// The bounds. Lengths are in characters.
const (
	// MaxLabels is the most labels an object has (an order's labels, a
	// policy's label_selector, a provider's metadata).
	MaxLabels = 64
	// MaxLabelName bounds a label key's name, the part after its prefix.
	MaxLabelName = 63
	// MaxLabelPrefix bounds a label key's optional prefix, a DNS subdomain
	// before a '/' (`app.kubernetes.io/name`).
	MaxLabelPrefix = 253
	// MaxLabelValue bounds a label's value.
	MaxLabelValue = 63
	// MaxName bounds ids, names and the references to them (a DNS label).
	MaxName = 63
	// MaxDisplayName bounds a display name.
	MaxDisplayName = 256
	// MaxDescription bounds a text a person writes: a description, the
	// reason of a forced deletion.
	MaxDescription = 2048
	// MaxMessage bounds a message a provider, an adapter or a worker
	// reports (a status message, a condition's, a step's).
	MaxMessage = 4096
	// MaxRegoCode bounds a policy's Rego source, in bytes (256 KiB).
	MaxRegoCode = 256 << 10
	// MaxSpecBytes bounds an order's spec, encoded as JSON (256 KiB): the
	// catalog item's defaults with the order's values, which the document
	// bounds only by the body's size.
	MaxSpecBytes = 256 << 10
)

// labelName is a label key's name: alphanumeric at both ends, '-', '_'
// and '.' between (Kubernetes' qualified name).
var labelName = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)

// dnsSubdomain is a label key's prefix (RFC 1123 subdomain, lower case).
var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// LabelKeyProblem says what is wrong with a label key, or "" when it is a
// good one: `[prefix/]name`, the name at most [MaxLabelName] characters of
// letters, digits, '-', '_' and '.' that starts and ends with a letter or
// digit, the optional prefix a lowercase DNS subdomain of at most
// [MaxLabelPrefix] characters.
func LabelKeyProblem(key string) string {
	prefix, name, hasPrefix := strings.Cut(key, "/")
	if !hasPrefix {
		name, prefix = key, ""
	}
	switch {
	case hasPrefix && prefix == "":
		return "its prefix before '/' must not be empty"
	case hasPrefix && len(prefix) > MaxLabelPrefix:
		return fmt.Sprintf("its prefix must be at most %d characters long", MaxLabelPrefix)
	case hasPrefix && !dnsSubdomain.MatchString(prefix):
		return "its prefix must be a lowercase DNS subdomain (example.com)"
	case name == "":
		return "its name must not be empty"
	case utf8.RuneCountInString(name) > MaxLabelName:
		return fmt.Sprintf("its name must be at most %d characters long", MaxLabelName)
	case !labelName.MatchString(name):
		return "its name must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	}
	return ""
}

// ValueProblem says what is wrong with a label value, or "" when it is at
// most [MaxLabelValue] characters long.
func ValueProblem(value string) string {
	if utf8.RuneCountInString(value) > MaxLabelValue {
		return fmt.Sprintf("must be at most %d characters long", MaxLabelValue)
	}
	return ""
}

// CheckLabels adds to errs what is wrong with labels, under field: more
// than [MaxLabels] of them, a key [LabelKeyProblem] refuses, a value
// [ValueProblem] refuses. Each key is named in its field as
// `labels["key"]`, cut short when it is long.
func CheckLabels(errs *invalid.Errors, field string, labels map[string]string) {
	if len(labels) > MaxLabels {
		errs.Add(field, "must have at most %d labels, not %d", MaxLabels, len(labels))
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if msg := LabelKeyProblem(k); msg != "" {
			errs.Add(labelField(field, k), "the key is not a label key: %s", msg)
		}
		if msg := ValueProblem(labels[k]); msg != "" {
			errs.Add(labelField(field, k), "%s", msg)
		}
	}
}

// CheckLabelPatch is CheckLabels for a merge patch of labels (null removes
// one): it checks the keys and values the patch sets. The count is the
// patched labels' to check.
func CheckLabelPatch(errs *invalid.Errors, field string, patch map[string]*string) {
	if len(patch) > MaxLabels {
		errs.Add(field, "must have at most %d labels, not %d", MaxLabels, len(patch))
	}
	for _, k := range slices.Sorted(maps.Keys(patch)) {
		v := patch[k]
		if v == nil {
			continue // a removal: whatever the key, it leaves nothing behind
		}
		if msg := LabelKeyProblem(k); msg != "" {
			errs.Add(labelField(field, k), "the key is not a label key: %s", msg)
		}
		if msg := ValueProblem(*v); msg != "" {
			errs.Add(labelField(field, k), "%s", msg)
		}
	}
}

// CheckLength adds field's refusal to errs when s is longer than max
// characters.
func CheckLength(errs *invalid.Errors, field, s string, max int) {
	if len(s) > max && utf8.RuneCountInString(s) > max {
		errs.Add(field, "must be at most %d characters long", max)
	}
}

// Truncate cuts s to max characters, the last an ellipsis: for a text a
// provider answered (not a request's), which is kept rather than refused.
func Truncate(s string, max int) string {
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

// labelField names one label of field: `labels["env"]`, the key cut to
// 64 characters and an ellipsis.
func labelField(field, key string) string {
	if utf8.RuneCountInString(key) > 64 {
		key = string([]rune(key)[:64]) + "…"
	}
	return fmt.Sprintf("%s[%q]", field, key)
}
