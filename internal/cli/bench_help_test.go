package cli

import (
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/stewardhq/steward/api"
)

// The examples in `steward bench --help` must name routes the API serves:
// a newcomer copies them first.
func TestBenchHelp_ExamplesNameRealRoutes(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := yaml.Unmarshal(api.OpenAPIYAML, &doc); err != nil {
		t.Fatal(err)
	}
	cmd := newBenchCmd(io.Discard)
	examples := regexp.MustCompile(`--path (\S+)`).FindAllStringSubmatch(cmd.Example, -1)
	if len(examples) == 0 {
		t.Fatalf("no --path in the examples:\n%s", cmd.Example)
	}
	// A route's {parameter} stands for any segment, the example's
	// numbered ids too.
	var routes []*regexp.Regexp
	for path := range doc.Paths {
		routes = append(routes, regexp.MustCompile("^"+regexp.MustCompile(`\\\{[a-z_]+\\\}`).
			ReplaceAllString(regexp.QuoteMeta(path), `[^/]+`)+"$"))
	}
	for _, m := range examples {
		path, _, _ := strings.Cut(strings.Trim(m[1], "'"), "?")
		if !slices.ContainsFunc(routes, func(r *regexp.Regexp) bool { return r.MatchString(path) }) {
			t.Errorf("example path %s is not a route of api/openapi.yaml", m[1])
		}
	}
}
