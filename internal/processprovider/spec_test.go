package processprovider

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSpec(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name           string
		reason         string
		spec           string
		requireCommand bool
		want           spec
		wantIgnored    []string
	}{
		{
			name:           "Defaults",
			reason:         "restart_policy defaults to on_failure and max_restarts to 5",
			spec:           `{"process": {"command": ["/bin/sleep", "60"]}}`,
			requireCommand: true,
			want:           spec{argv: []string{"/bin/sleep", "60"}, policy: restartOnFailure, maxRestarts: 5},
		},
		{
			name:           "Full",
			reason:         "args follow command; env keeps its order; other fields are ignored, by name",
			spec:           `{"image": {"reference": "x"}, "network": {}, "process": {"command": ["/bin/sh", "-c"], "args": ["echo $A", "sh"], "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "x=y"}]}, "restart_policy": "always", "max_restarts": 0, "resources": {}}`,
			requireCommand: true,
			want: spec{
				argv: []string{"/bin/sh", "-c", "echo $A", "sh"}, env: []string{"A=1", "B=x=y"},
				policy: restartAlways, maxRestarts: 0,
			},
			wantIgnored: []string{"image", "network", "resources"},
		},
		{
			name:        "NullsAreDefaults",
			reason:      "an explicit null is an absent field",
			spec:        `{"process": null, "restart_policy": null, "max_restarts": null}`,
			want:        spec{policy: restartOnFailure, maxRestarts: 5},
			wantIgnored: []string{},
		},
		{
			name:        "NoOpNeedsNoCommand",
			reason:      "no-op mode accepts a spec without process",
			spec:        `{"image": {"reference": "x"}}`,
			want:        spec{policy: restartOnFailure, maxRestarts: 5},
			wantIgnored: []string{"image"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ignored, err := parseSpec(decodeSpec(t, tc.spec), tc.requireCommand)
			if err != nil {
				t.Fatalf("%s\nparseSpec: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(spec{})); diff != "" {
				t.Errorf("%s\nspec (-want +got):\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantIgnored, ignored, cmpEmpty); diff != "" {
				t.Errorf("%s\nignored (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// cmpEmpty equates nil and empty slices.
var cmpEmpty = cmp.Comparer(func(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return cmp.Equal(a, b)
})
