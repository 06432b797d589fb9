package limits_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/limits"
	"github.com/stewardhq/steward/pkg/provider"
)

func TestLabelKeyProblem_KubernetesKeys(t *testing.T) {
	t.Parallel()
	good := []string{"env", "a", "A.b-c_d", "app.kubernetes.io/name", "resources.total_cpu", "x/" + strings.Repeat("n", 63),
		strings.Repeat("p", 63) + "." + strings.Repeat("q", 63) + "/name", "1", "service_type"}
	for _, k := range good {
		if msg := limits.LabelKeyProblem(k); msg != "" {
			t.Errorf("%q refused: %s", k, msg)
		}
	}
	bad := map[string]string{
		"":                                 "its name must not be empty",
		strings.Repeat("k", 64):            "its name must be at most 63 characters long",
		"/name":                            "its prefix before '/' must not be empty",
		"example.com/":                     "its name must not be empty",
		strings.Repeat("p", 254) + "/name": "its prefix must be at most 253 characters long",
		"Example.com/name":                 "its prefix must be a lowercase DNS subdomain (example.com)",
		"a/b/c":                            "its name must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit",
		"team name":                        "its name must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit",
		"-env":                             "its name must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit",
		"env:prod":                         "its name must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit",
	}
	for k, want := range bad {
		if got := limits.LabelKeyProblem(k); got != want {
			t.Errorf("LabelKeyProblem(%.40q) = %q, want %q", k, got, want)
		}
	}
}

func TestCheckLabels_NamesEachLabelAndTheBound(t *testing.T) {
	t.Parallel()
	many := map[string]string{}
	for i := range limits.MaxLabels + 1 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	cases := []struct {
		name   string
		labels map[string]string
		want   []invalid.Field
	}{
		{name: "none", labels: nil},
		{name: "64 good ones", labels: func() map[string]string {
			m := map[string]string{}
			for k := range many {
				if len(m) < limits.MaxLabels {
					m[k] = strings.Repeat("v", limits.MaxLabelValue)
				}
			}
			return m
		}()},
		{name: "65", labels: many, want: []invalid.Field{{Field: "labels", Message: "must have at most 64 labels, not 65"}}},
		{name: "a long key, cut in its field", labels: map[string]string{strings.Repeat("k", 100): "v"},
			want: []invalid.Field{{Field: `labels["` + strings.Repeat("k", 64) + `…"]`,
				Message: "the key is not a label key: its name must be at most 63 characters long"}}},
		{name: "a long value", labels: map[string]string{"env": strings.Repeat("v", 64)},
			want: []invalid.Field{{Field: `labels["env"]`, Message: "must be at most 63 characters long"}}},
	}
	for _, tc := range cases {
		var errs invalid.Errors
		limits.CheckLabels(&errs, "labels", tc.labels)
		var got []invalid.Field
		if err, ok := errs.Err().(*invalid.Error); ok {
			got = err.Fields
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: fields (-want +got):\n%s", tc.name, diff)
		}
	}

	// A patch's removals are not checked; what it sets is.
	v := "x"
	var errs invalid.Errors
	limits.CheckLabelPatch(&errs, "labels", map[string]*string{"bad key": nil, "good": &v})
	if err := errs.Err(); err != nil {
		t.Errorf("a patch removing a bad key: %v", err)
	}
	limits.CheckLabelPatch(&errs, "labels", map[string]*string{"bad key": &v})
	if errs.Err() == nil {
		t.Error("a patch setting a bad key passed")
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	if got := limits.Truncate("héllo", 5); got != "héllo" {
		t.Errorf("Truncate at its length = %q", got)
	}
	if got := limits.Truncate("héllo wörld", 5); got != "héll…" {
		t.Errorf("Truncate = %q, want héll…", got)
	}
}

// The provider SDK cuts the messages it reports to the bound Steward holds
// them to.
func TestMaxMessage_IsTheSDKs(t *testing.T) {
	t.Parallel()
	if provider.MaxMessageLen != limits.MaxMessage {
		t.Errorf("provider.MaxMessageLen = %d, limits.MaxMessage = %d", provider.MaxMessageLen, limits.MaxMessage)
	}
}
