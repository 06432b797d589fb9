package resourceid_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/resourceid"
)

func TestValid(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, id string
		want     bool
	}{
		{"one letter", "a", true},
		{"letters", "vm", true},
		{"letters digits hyphens", "small-fedora-vm-2", true},
		{"letter then digits", "a123", true},
		{"63 characters", "a" + strings.Repeat("b", 62), true},
		{"64 characters", "a" + strings.Repeat("b", 63), false},
		{"digit first", "123-test", false},
		{"one digit", "1", false},
		{"hyphen first", "-test", false},
		{"hyphen last", "test-", false},
		{"uppercase", "Test", false},
		{"uppercase inside", "teSt", false},
		{"underscore", "bad_id", false},
		{"dot", "a.b", false},
		{"empty", "", false},
		{"lowercase UUID", "08aa81d1-a0d2-4d5f-a4df-b80addf07781", true},
		{"UUID v7", "0194a1f0-3c2d-7e1a-8b9c-5d6e7f809a1b", true},
		{"uppercase UUID", "08AA81D1-A0D2-4D5F-A4DF-B80ADDF07781", false},
		{"UUID without hyphens", "08aa81d1a0d24d5fa4dfb80addf07781", false},
		{"UUID in braces", "{08aa81d1-a0d2-4d5f-a4df-b80addf07781}", false},
		{"UUID with a newline", "08aa81d1-a0d2-4d5f-a4df-b80addf07781\n", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := resourceid.Valid(tc.id); got != tc.want {
				t.Errorf("Valid(%q) = %v, want %v", tc.id, got, tc.want)
			}
			err := resourceid.Check("id", tc.id)
			if tc.want {
				if err != nil {
					t.Errorf("Check(%q) = %v, want nil", tc.id, err)
				}
				return
			}
			var bad *invalid.Error
			if !errors.As(err, &bad) || len(bad.Fields) != 1 || bad.Fields[0].Field != "id" ||
				bad.Fields[0].Message != resourceid.Message {
				t.Errorf("Check(%q) = %#v, want an *invalid.Error naming id with Message", tc.id, err)
			}
		})
	}
}

// APIPattern, the one expression api/openapi.yaml uses, agrees with each
// of its halves, and Message names the rule.
func TestPatterns(t *testing.T) {
	t.Parallel()
	letter, uuid := regexp.MustCompile(resourceid.Pattern), regexp.MustCompile(resourceid.UUIDPattern)
	for _, id := range []string{"a", "vm-1", "123-test", "-a", "a-", "A", "", "08aa81d1-a0d2-4d5f-a4df-b80addf07781",
		"08AA81D1-A0D2-4D5F-A4DF-B80ADDF07781", "vm\n", "x|08aa81d1-a0d2-4d5f-a4df-b80addf07781"} {
		if want := letter.MatchString(id) || uuid.MatchString(id); resourceid.Valid(id) != want {
			t.Errorf("Valid(%q) = %v, want %v", id, !want, want)
		}
	}
	if !strings.Contains(resourceid.Message, resourceid.Pattern) || !strings.Contains(resourceid.Message, "AEP-122") {
		t.Errorf("Message = %q, want the pattern and AEP-122 named", resourceid.Message)
	}
}
