package adapter

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exampleConfig is the example the repository ships; parsing it here keeps
// it from rotting.
const exampleConfig = "../../examples/adapters/cluster-namespace.yaml"

func TestLoad_TheShippedExampleParses(t *testing.T) {
	t.Parallel()
	cfg, err := Load(exampleConfig)
	if err != nil {
		t.Fatalf("Load(%s): %v", exampleConfig, err)
	}
	if cfg.Adapter.Name != "cluster-namespace" || !cmp.Equal(cfg.ServiceTypes, []string{"namespaced-process"}) {
		t.Errorf("adapter %q for %v, want cluster-namespace for [namespaced-process]", cfg.Adapter.Name, cfg.ServiceTypes)
	}
	var policies, retained []string
	for _, r := range cfg.Resources {
		policies = append(policies, r.DeleteOptions.PropagationPolicy)
		if r.DeleteOptions.Retain {
			retained = append(retained, r.Name)
		}
	}
	if want := []string{"Foreground", "Background", "Orphan", ""}; !cmp.Equal(policies, want) {
		t.Errorf("propagation policies = %v, want %v (the example shows each)", policies, want)
	}
	if !cmp.Equal(retained, []string{"record"}) || len(cfg.Resources[0].DeleteOptions.After) == 0 {
		t.Errorf("the example must show retain and after; retained %v, after %v", retained, cfg.Resources[0].DeleteOptions.After)
	}
	if len(cfg.Post.Conditions) == 0 || len(cfg.Post.Data) == 0 {
		t.Error("the example must show post conditions and data")
	}
}

func TestLoad_NamesTheFileInTheError(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("adapter: {name: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	ce, ok := errors.AsType[*ConfigError](err)
	if !ok || ce.File != path || !strings.Contains(err.Error(), path) {
		t.Fatalf("Load = %v, want a *ConfigError naming %s", err, path)
	}
}

// parts builds a config from a valid default for each top-level key, so a
// case changes only what it is about.
type parts struct {
	head, params, preconditions, whenDeleting, resources, post string
}

func (p parts) yaml() string {
	def := func(s, d string) string {
		if s == "" {
			return d
		}
		return s
	}
	return strings.Join([]string{
		def(p.head, "adapter: {name: test}\nservice_types: [cluster]"),
		def(p.params, `params:
  - {name: orderId, source: event.id, required: true}
  - {name: order, source: {api_call: {url: "/api/v1/catalog-item-instances/{{ .orderId }}"}}}`),
		def(p.preconditions, `preconditions:
  - name: placed
    api_call: {url: "/api/v1/catalog-item-instances/{{ .orderId }}"}
    capture: [{name: state, field: state}]
    conditions: [{field: state, operator: equals, value: up}]`),
		def(p.whenDeleting, `when_deleting: "order.deleted_at != null"`),
		def(p.resources, `resources:
  - name: a
    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: "a-{{ .orderId }}", namespace: default}}
    discovery: {namespace: default, by_name: "a-{{ .orderId }}"}
  - name: b
    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: default}}
    discovery: {namespace: default, by_name: b}
    delete_options: {after: [a]}`),
		def(p.post, "post: {}"),
	}, "\n")
}

func TestParse_TheDefaultPartsAreValid(t *testing.T) {
	t.Parallel()
	if _, err := Parse([]byte(parts{}.yaml())); err != nil {
		t.Fatal(err)
	}
}

func TestParse_ReportsEachProblemAtItsField(t *testing.T) {
	t.Parallel()
	resource := func(name, extra string) string {
		return "  - name: " + name + "\n    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: " + name +
			", namespace: default}}\n    discovery: {namespace: default, by_name: " + name + "}\n" + extra
	}
	tests := []struct {
		name   string
		parts  parts
		field  string
		msg    string
		reason string
	}{
		{name: "adapter name missing", parts: parts{head: "adapter: {}\nservice_types: [cluster]"},
			field: "adapter.name", msg: "is required", reason: "the name is the report's path segment"},
		{name: "adapter name invalid", parts: parts{head: "adapter: {name: Bad_Name}\nservice_types: [cluster]"},
			field: "adapter.name", msg: "lower-case", reason: "the name must be a valid path segment"},
		{name: "no service types", parts: parts{head: "adapter: {name: test}\nservice_types: []"},
			field: "service_types", msg: "is required", reason: "an adapter must consume something"},
		{name: "unknown top-level field", parts: parts{post: "post: {}\nresource: []"},
			field: "resource", msg: "unknown field", reason: "typos fail at load"},
		{name: "unknown nested field", parts: parts{resources: "resources:\n" + resource("a", "    delet_options: {retain: true}\n")},
			field: "resources[0].delet_options", msg: "unknown field", reason: "typos fail at load, with their path"},
		{name: "unknown field in a source object", parts: parts{params: "params:\n  - {name: x, source: {expresion: \"1\"}}"},
			field: "params[0].source.expresion", msg: "unknown field", reason: "sources have their own decoding, still checked"},
		{name: "duplicate param", parts: parts{params: "params:\n  - {name: orderId, source: event.id}\n  - {name: orderId, source: event.href}\n  - {name: order, source: event.x}"},
			field: "params[1].name", msg: "already declared at params[0].name", reason: "names must be unique"},
		{name: "capture shadows a param", parts: parts{preconditions: "preconditions:\n  - name: p\n    api_call: {url: /x}\n    capture: [{name: orderId, field: id}]"},
			field: "preconditions[0].capture[0].name", msg: "already declared", reason: "params and captures share one namespace"},
		{name: "duplicate precondition", parts: parts{preconditions: "preconditions:\n  - {name: p, expression: \"true\"}\n  - {name: p, expression: \"true\"}"},
			field: "preconditions[1].name", msg: "declared twice", reason: "names must be unique"},
		{name: "duplicate resource", parts: parts{resources: "resources:\n" + resource("a", "") + resource("a", "")},
			field: "resources[1].name", msg: "declared twice", reason: "names must be unique"},
		{name: "reserved param name", parts: parts{params: "params:\n  - {name: event, source: event.id}\n  - {name: orderId, source: event.id}\n  - {name: order, source: event.x}"},
			field: "params[0].name", msg: "reserved", reason: "event is a CEL variable already"},
		{name: "unknown source", parts: parts{params: "params:\n  - {name: orderId, source: foo.bar}\n  - {name: order, source: event.x}"},
			field: "params[0].source", msg: "want event.<path>, env.<VAR> or <earlier param>.<path>", reason: "source syntax"},
		{name: "source reads a later param", parts: parts{params: "params:\n  - {name: orderId, source: order.id}\n  - {name: order, source: event.x}"},
			field: "params[0].source", msg: "earlier param", reason: "params resolve in order"},
		{name: "source of the wrong type", parts: parts{params: "params:\n  - {name: orderId, source: 3}\n  - {name: order, source: event.x}"},
			field: "params[0].source", msg: "want a string", reason: "source shape"},
		{name: "env without a variable", parts: parts{params: "params:\n  - {name: orderId, source: env}\n  - {name: order, source: event.x}"},
			field: "params[0].source", msg: "want env.<VAR>", reason: "env needs a variable name"},
		{name: "api_call and expression", parts: parts{params: "params:\n  - {name: orderId, source: event.id}\n  - {name: order, source: {expression: \"1\", api_call: {url: /x}}}"},
			field: "params[1].source", msg: "not both", reason: "one source"},
		{name: "write method", parts: parts{params: "params:\n  - {name: orderId, source: event.id}\n  - {name: order, source: {api_call: {method: POST, url: /x}}}"},
			field: "params[1].source.api_call.method", msg: "only GET", reason: "a redelivered event must not repeat a write"},
		{name: "absolute url", parts: parts{params: "params:\n  - {name: orderId, source: event.id}\n  - {name: order, source: {api_call: {url: \"http://evil/x\"}}}"},
			field: "params[1].source.api_call.url", msg: "relative", reason: "the token must not leave for another host"},
		{name: "bad timeout", parts: parts{params: "params:\n  - {name: orderId, source: event.id}\n  - {name: order, source: {api_call: {url: /x, timeout: soon}}}"},
			field: "params[1].source.api_call.timeout", msg: "duration", reason: "timeouts are durations"},
		{name: "unknown operator", parts: parts{preconditions: "preconditions:\n  - {name: p, conditions: [{field: orderId, operator: like, value: x}]}"},
			field: "preconditions[0].conditions[0].operator", msg: `"like"`, reason: "operators are a fixed set"},
		{name: "in without values", parts: parts{preconditions: "preconditions:\n  - {name: p, conditions: [{field: orderId, operator: in, value: x}]}"},
			field: "preconditions[0].conditions[0]", msg: "takes values", reason: "in compares with a list"},
		{name: "condition on an undeclared name", parts: parts{preconditions: "preconditions:\n  - {name: p, conditions: [{field: status.phase, operator: exists}]}"},
			field: "preconditions[0].conditions[0].field", msg: `"status" is not a param or capture`, reason: "a field's first segment is a name"},
		{name: "capture without api_call", parts: parts{preconditions: "preconditions:\n  - {name: p, expression: \"true\", capture: [{name: s, field: state}]}"},
			field: "preconditions[0].capture", msg: "needs an api_call", reason: "nothing to capture from"},
		{name: "empty precondition", parts: parts{preconditions: "preconditions:\n  - {name: p}"},
			field: "preconditions[0]", msg: "at least one", reason: "a precondition must check something"},
		{name: "capture expression syntax", parts: parts{preconditions: "preconditions:\n  - {name: p, api_call: {url: /x}, capture: [{name: s, expression: \"generation >\"}]}"},
			field: "preconditions[0].capture[0].expression", msg: "Syntax error", reason: "capture expressions are parsed at load"},
		{name: "bad propagation policy", parts: parts{resources: "resources:\n" + resource("a", "    delete_options: {propagation_policy: Cascade}\n")},
			field: "resources[0].delete_options.propagation_policy", msg: `"Cascade"`, reason: "only Kubernetes' three values"},
		{name: "retain with a policy", parts: parts{resources: "resources:\n" + resource("a", "    delete_options: {retain: true, propagation_policy: Orphan}\n")},
			field: "resources[0].delete_options.propagation_policy", msg: "retain", reason: "a retained resource is never deleted"},
		{name: "after an unknown resource", parts: parts{resources: "resources:\n" + resource("a", "    delete_options: {after: [nope, gone]}\n")},
			field: "resources[0].delete_options.after", msg: `resource "a" comes after "nope", "gone", which are not declared`, reason: "name the resource and every unknown name"},
		{name: "after itself", parts: parts{resources: "resources:\n" + resource("a", "    delete_options: {after: [a]}\n")},
			field: "resources[0].delete_options.after", msg: `resource "a" comes after itself`, reason: "a self-cycle"},
		{name: "cycle", parts: parts{resources: "resources:\n" + resource("a", "    delete_options: {after: [b]}\n") + resource("b", "    delete_options: {after: [c]}\n") + resource("c", "    delete_options: {after: [a]}\n")},
			field: "resources[0].delete_options.after", msg: "cycle: a → b → c → a", reason: "name the cycle"},
		{name: "missing kind", parts: parts{resources: "resources:\n  - name: a\n    manifest: {apiVersion: v1, metadata: {name: a}}\n    discovery: {by_name: a}"},
			field: "resources[0].manifest.kind", msg: "is required", reason: "a manifest needs its kind"},
		{name: "templated kind", parts: parts{resources: "resources:\n  - name: a\n    manifest: {apiVersion: v1, kind: \"{{ .orderId }}\", metadata: {name: a}}\n    discovery: {by_name: a}"},
			field: "resources[0].manifest.kind", msg: "literal", reason: "discovery needs the kind before any event"},
		{name: "generateName", parts: parts{resources: "resources:\n  - name: a\n    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, generateName: a-}}\n    discovery: {by_name: a}"},
			field: "resources[0].manifest.metadata.generateName", msg: "not allowed", reason: "apply needs a fixed name"},
		{name: "no name", parts: parts{resources: "resources:\n  - name: a\n    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {}}\n    discovery: {by_name: a}"},
			field: "resources[0].manifest.metadata.name", msg: "is required", reason: "apply needs a name"},
		{name: "no discovery", parts: parts{resources: "resources:\n  - name: a\n    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}"},
			field: "resources[0].discovery", msg: "is required", reason: "a resource must be found again"},
		{name: "no resources", parts: parts{resources: "resources: []"},
			field: "resources", msg: "is required", reason: "an adapter manages something"},
		{name: "template syntax", parts: parts{resources: "resources:\n  - name: a\n    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: \"{{ .orderId \"}}\n    discovery: {by_name: a}"},
			field: "resources[0].manifest.metadata.name", msg: "template", reason: "templates are parsed at load"},
		{name: "template reads an undeclared name", parts: parts{resources: "resources:\n  - name: a\n    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n    discovery: {by_name: \"{{ .nope | lower }}\"}"},
			field: "resources[0].discovery.by_name", msg: `"nope"`, reason: "missingkey=error would fail every event"},
		{name: "template reads a later param", parts: parts{params: "params:\n  - {name: orderId, source: {api_call: {url: \"/x/{{ .order }}\"}}}\n  - {name: order, source: event.x}"},
			field: "params[0].source.api_call.url", msg: `"order"`, reason: "params resolve in order"},
		{name: "CEL syntax", parts: parts{params: "params:\n  - {name: orderId, source: event.id}\n  - {name: order, source: {expression: \"orderId +\"}}"},
			field: "params[1].source.expression", msg: "Syntax error", reason: "CEL compiles at load"},
		{name: "CEL unknown variable", parts: parts{whenDeleting: "when_deleting: \"isDeleting\""},
			field: "when_deleting", msg: "undeclared reference to 'isDeleting'", reason: "variables are declared"},
		{name: "CEL reads a later param", parts: parts{params: "params:\n  - {name: orderId, source: {expression: \"order\"}}\n  - {name: order, source: event.x}"},
			field: "params[0].source.expression", msg: "undeclared reference to 'order'", reason: "params resolve in order"},
		{name: "when_deleting not bool", parts: parts{whenDeleting: "when_deleting: \"'yes'\""},
			field: "when_deleting", msg: "want bool", reason: "it is a switch"},
		{name: "resources outside post", parts: parts{preconditions: "preconditions:\n  - {name: p, expression: \"has(resources.a)\"}"},
			field: "preconditions[0].expression", msg: "undeclared reference to 'resources'", reason: "resources exist only in post"},
		{name: "post status expression", parts: parts{post: "post:\n  conditions:\n    - {type: Available, status: {expression: \"resources.a.ready ? 'True' : nope\"}}"},
			field: "post.conditions[0].status.expression", msg: "undeclared reference to 'nope'", reason: "post expressions compile at load"},
		{name: "post status literal", parts: parts{post: "post:\n  conditions:\n    - {type: Available, status: \"Yes\"}"},
			field: "post.conditions[0].status", msg: `"True", "False", "Unknown"`, reason: "a status is one of three"},
		{name: "post condition without type", parts: parts{post: "post:\n  conditions:\n    - {status: \"True\"}"},
			field: "post.conditions[0].type", msg: "is required", reason: "an override names its condition"},
		{name: "post data expression", parts: parts{post: "post:\n  data:\n    ns: {expression: \"resources.a.metadata.\"}"},
			field: "post.data.ns.expression", msg: "Syntax error", reason: "data expressions compile at load"},
		{name: "wrong type", parts: parts{resources: "resources:\n" + resource("a", "    delete_options: {after: a}\n")},
			field: "resources.delete_options.after", msg: "want []string", reason: "types are checked"},
		{name: "not YAML", parts: parts{post: "post: {"},
			field: "(document)", msg: "not valid YAML", reason: "syntax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.parts.yaml()))
			ce, ok := errors.AsType[*ConfigError](err)
			if !ok {
				t.Fatalf("Parse = %v, want a *ConfigError\nreason: %s", err, tt.reason)
			}
			for _, p := range ce.Problems {
				if p.Field == tt.field && strings.Contains(p.Message, tt.msg) {
					return
				}
			}
			t.Errorf("no problem at %s containing %q; got:\n%v\nreason: %s", tt.field, tt.msg, err, tt.reason)
		})
	}
}

func TestParse_ListsEveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	yaml := `
adapter: {name: test}
service_types: [cluster]
params:
  - {name: orderId, source: event.id}
  - {name: flag, source: {expression: "orderId ++ 1"}}
preconditions:
  - {name: p, conditions: [{field: orderId, operator: matches, value: x}]}
resources:
  - name: a
    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
    discovery: {by_name: a}
    delete_options: {after: [b], propagation_policy: Now}
  - name: b
    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}
    discovery: {by_name: b}
    delete_options: {after: [a, ghost]}
post:
  conditions:
    - {type: Health, status: {expression: "undefinedThing"}}
  typo: 1
`
	_, err := Parse([]byte(yaml))
	ce, ok := errors.AsType[*ConfigError](err)
	if !ok {
		t.Fatalf("Parse = %v, want a *ConfigError", err)
	}
	var got []string
	for _, p := range ce.Problems {
		got = append(got, p.Field)
	}
	want := []string{
		"post.typo",
		"preconditions[0].conditions[0].operator",
		"resources[0].delete_options.propagation_policy",
		"resources[1].delete_options.after", // ghost
		"resources[0].delete_options.after", // cycle a → b → a
		"params[1].source.expression",
		"post.conditions[0].status.expression",
	}
	if !cmp.Equal(got, want) {
		t.Errorf("problem fields (-want +got):\n%s\nerror:\n%v", cmp.Diff(want, got), err)
	}
	if !containsAll(err.Error(), "7 problems", "ghost", "a → b → a", "undefinedThing") {
		t.Errorf("the message should list every problem:\n%v", err)
	}
}
