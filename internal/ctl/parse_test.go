package ctl

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/pkg/client"
)

func TestParseSet_JSONWhenItParsesElseString(t *testing.T) {
	for in, want := range map[string]string{
		`process.args=["300"]`:     `{"path":"process.args","value":["300"]}`,
		`size=small`:               `{"path":"size","value":"small"}`,
		`vcpu.count=2`:             `{"path":"vcpu.count","value":2}`,
		`big=12345678901234567890`: `{"path":"big","value":12345678901234567890}`,
		`on=true`:                  `{"path":"on","value":true}`,
		`m={"a":1}`:                `{"path":"m","value":{"a":1}}`,
		`s="quoted"`:               `{"path":"s","value":"quoted"}`,
		`two=1 2`:                  `{"path":"two","value":"1 2"}`,
		`empty=`:                   `{"path":"empty","value":""}`,
		`n=null`:                   `{"path":"n","value":"null"}`,
		`eq=a=b`:                   `{"path":"eq","value":"a=b"}`,
	} {
		v, err := parseSet(in)
		if err != nil {
			t.Errorf("parseSet(%q): %v", in, err)
			continue
		}
		if b, _ := json.Marshal(v); string(b) != want {
			t.Errorf("parseSet(%q) = %s, want %s", in, b, want)
		}
	}
	for _, bad := range []string{"novalue", "=2"} {
		var u *UsageError
		if _, err := parseSet(bad); !errors.As(err, &u) {
			t.Errorf("parseSet(%q): %v, want a usage error", bad, err)
		}
	}
}

func TestParseFor(t *testing.T) {
	for in, want := range map[string]waitFor{
		"settled":               {what: "settled"},
		"delete":                {what: "delete"},
		"state=up":              {what: "field", path: "state", value: "up"},
		"health.message=":       {what: "field", path: "health.message", value: ""},
		"condition=Ready":       {what: "condition", path: "Ready", value: "True"},
		"condition=Ready=False": {what: "condition", path: "Ready", value: "False"},
	} {
		got, err := parseFor(in)
		if err != nil || got != want {
			t.Errorf("parseFor(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"up", "=up", "condition="} {
		if _, err := parseFor(bad); ExitCode(err) != 2 {
			t.Errorf("parseFor(%q): %v, want a usage error", bad, err)
		}
	}
}

// Every kind apply can create names request and resource schemas that
// exist in api/openapi.yaml: apply filters members by them.
func TestKinds_SchemasExist(t *testing.T) {
	s, err := loadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		if k.create == nil {
			continue
		}
		for _, name := range []string{k.schemaName(), k.createSchema, k.updateSchema} {
			if name != "" && len(s.props(name)) == 0 {
				t.Errorf("%s: schema %q has no properties in api/openapi.yaml", k.name, name)
			}
		}
		if (k.update == nil) != (k.updateSchema == "") {
			t.Errorf("%s: an update call needs an update schema and the reverse", k.name)
		}
	}
}

func TestReadDocuments_YAMLStreamsAndJSONArrays(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	yamlFile := write("a.yaml", "---\nkind: policies\nid: a\npriority: 1\n---\n\n---\nkind: items\nid: b\n")
	docs, err := readDocuments(yamlFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(docs)
	if string(got) != `[{"id":"a","kind":"policies","priority":1},{"id":"b","kind":"items"}]` {
		t.Errorf("YAML stream: %s", got)
	}
	jsonFile := write("b.json", `[{"path": "policies/a"}, {"kind": "lifecycle", "id": "x"}]`)
	if docs, err = readDocuments(jsonFile, nil); err != nil || len(docs) != 2 {
		t.Fatalf("JSON array: %v %v", docs, err)
	}
	docs, err = readDocuments("-", strings.NewReader(`{"kind": "policies", "id": "p"}`))
	if err != nil || len(docs) != 1 || docs[0]["id"] != "p" {
		t.Errorf("stdin: %v %v", docs, err)
	}
	if _, err := readDocuments(write("c.yaml", "---\n"), nil); ExitCode(err) != 2 {
		t.Errorf("an empty file: %v, want a usage error", err)
	}
	if _, err := readDocuments(write("d.yaml", "- 1\n- 2\n"), nil); err == nil {
		t.Error("a YAML list of numbers was read as resources")
	}
}

func TestPlanApply_KindAndIDFromMembersOrPath(t *testing.T) {
	for _, tc := range []struct {
		doc          map[string]any
		kind, id, et string
	}{
		{map[string]any{"kind": "policy", "id": "a"}, "policies", "a", ""},
		{map[string]any{"path": "catalog-items/small", "etag": `"3"`}, "catalog-items", "small", `"3"`},
		{map[string]any{"kind": "orders"}, "catalog-item-instances", "", ""},
		{map[string]any{"kind": "providers", "name": "kv"}, "providers", "kv", ""},
	} {
		p, err := planApply(tc.doc)
		if err != nil {
			t.Errorf("%v: %v", tc.doc, err)
			continue
		}
		if diff := cmp.Diff([]string{tc.kind, tc.id, tc.et}, []string{p.k.name, p.id, p.etag}); diff != "" {
			t.Errorf("%v: (-want +got)\n%s", tc.doc, diff)
		}
		if _, ok := p.doc["kind"]; ok {
			t.Errorf("%v: kind is still in the body", tc.doc)
		}
	}
	for _, bad := range []map[string]any{{"id": "x"}, {"kind": "nope"}, {"kind": "operations"}} {
		if _, err := planApply(bad); ExitCode(err) != 2 {
			t.Errorf("%v: %v, want a usage error", bad, err)
		}
	}
}

func TestUpdateBody_SendsChangesOnly(t *testing.T) {
	current, err := decodeObject([]byte(`{"id":"p","path":"policies/p","policy_type":"GLOBAL","priority":10,
		"display_name":"P","enabled":true,"label_selector":{"service_type":"vm"},"etag":"\"2\"","create_time":"2026-01-01T00:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := planApply(map[string]any{"kind": "policies", "id": "p", "policy_type": "GLOBAL", "priority": json.Number("20"),
		"display_name": "P", "create_time": "2020-01-01T00:00:00Z", "etag": `"1"`})
	body, changed, err := p.updateBody(current)
	if err != nil || !changed || string(body) != `{"priority":20}` {
		t.Errorf("updateBody = %s, %v, %v; want only the changed priority", body, changed, err)
	}
	p.doc["priority"] = json.Number("10")
	if _, changed, err := p.updateBody(current); changed || err != nil {
		t.Errorf("an unchanged document changed: %v %v", changed, err)
	}
}

// Issue 22, item 14: KIND ID... and KIND/ID... (what -o name prints) name
// the same resources; a repair operation's id is APP/OPERATION.
func TestParseRefs_KindIDAndKindSlashID(t *testing.T) {
	type got struct{ kind, id string }
	read := func(args ...string) (string, []got, error) {
		k, refs, err := parseRefs(args)
		var gs []got
		for _, r := range refs {
			gs = append(gs, got{r.k.name, r.id})
		}
		name := ""
		if k != nil {
			name = k.name
		}
		return name, gs, err
	}
	for _, tc := range []struct {
		args     []string
		kind     string
		refs     []got
		wantKind bool
	}{
		{[]string{"orders"}, "catalog-item-instances", nil, true},
		{[]string{"order", "a", "b"}, "catalog-item-instances", []got{{"catalog-item-instances", "a"}, {"catalog-item-instances", "b"}}, true},
		{[]string{"catalog-item-instances/c1"}, "", []got{{"catalog-item-instances", "c1"}}, false},
		{[]string{"policies/p", "orders/o"}, "", []got{{"policies", "p"}, {"catalog-item-instances", "o"}}, false},
		{[]string{"repair-operations/sc1/op-1"}, "", []got{{"repair-operations", "sc1/op-1"}}, false},
		{[]string{"repair-operations", "sc1/op-1"}, "repair-operations", []got{{"repair-operations", "sc1/op-1"}}, true},
		{[]string{"app-instances/sc1"}, "", []got{{"app-instances", "sc1"}}, false},
	} {
		kind, refs, err := read(tc.args...)
		if err != nil || kind != tc.kind || !slices.Equal(refs, tc.refs) {
			t.Errorf("parseRefs(%q) = %q %v %v; want %q %v", tc.args, kind, refs, err, tc.kind, tc.refs)
		}
	}
	for _, bad := range [][]string{{"ordrs/x"}, {"orders/x", "y"}, {"orders/a/b"}, {"repair-operations/sc1"},
		{"orders/.."}, {"order", "a/b"}, {"repair-operations/sc1/"}, {}} {
		if _, _, err := read(bad...); ExitCode(err) != 2 {
			t.Errorf("parseRefs(%q): %v, want a usage error", bad, err)
		}
	}
	// -o name of every kind reads back as the same kind and id.
	for _, k := range kinds {
		for _, o := range fixture(t, k) {
			if k.get == nil {
				continue
			}
			kind, refs, err := read(o.name(k))
			if err != nil || kind != "" || len(refs) != 1 || refs[0].kind != k.name || refs[0].id != o.id(k) {
				t.Errorf("-o name %q reads back as %v (%v), want %s %s", o.name(k), refs, err, k.name, o.id(k))
			}
		}
	}
	if id, err := appInstanceID("catalog-item-instances/sc1"); err != nil || id != "sc1" {
		t.Errorf("appInstanceID(catalog-item-instances/sc1) = %q, %v", id, err)
	}
	if _, err := appInstanceID("policies/sc1"); ExitCode(err) != 2 {
		t.Errorf("appInstanceID(policies/sc1): %v, want a usage error", err)
	}
}

func TestRepairRequest_Flags(t *testing.T) {
	b, err := repairRequest("repair", "whole_runtime", "agent-1", "", false)
	if err != nil || b.Scope != "member" || *b.TargetMemberId != "agent-1" {
		t.Errorf("--member alone: %+v %v, want scope member", b, err)
	}
	if b, err := repairRequest("reconcile", "whole_runtime", "", "", false); err != nil || b.Scope != "whole_runtime" || b.TargetMemberId != nil {
		t.Errorf("no flags: %+v %v", b, err)
	}
	if b, err := repairRequest("repair", "control_plane", "", "server", true); err != nil || *b.ComponentKey != "server" {
		t.Errorf("--scope control_plane --component server: %+v %v", b, err)
	}
	for _, bad := range [][2]string{{"member", ""}, {"whole_runtime", "agent-1"}, {"everything", ""}} {
		if _, err := repairRequest("repair", bad[0], bad[1], "", true); ExitCode(err) != 2 {
			t.Errorf("--scope %s --member %q: %v, want a usage error", bad[0], bad[1], err)
		}
	}
	if _, err := repairRequest("repair", "member", "a", "server", true); ExitCode(err) != 2 {
		t.Errorf("--component with scope member: %v, want a usage error", err)
	}
}

func TestRepairProgress(t *testing.T) {
	ops := fixture(t, repairOperations)
	want := []string{
		"status succeeded, 8/8 steps done, phase report_status succeeded",
		"status running, 2/8 steps done, phase member_health_check running",
		"status failed, 1/8 steps done, phase precheck failed",
	}
	for i, o := range ops {
		if got := repairSummary(o); got != want[i] {
			t.Errorf("repairSummary(%s) = %q, want %q", o.str("id"), got, want[i])
		}
	}
	if done, err := repairDone(ops[0]); !done || err != nil {
		t.Errorf("a succeeded operation: %v %v", done, err)
	}
	if done, err := repairDone(ops[1]); done || err != nil {
		t.Errorf("a running operation: %v %v", done, err)
	}
	if done, err := repairDone(ops[2]); !done || err == nil || !strings.Contains(err.Error(), "REPAIR_TIMED_OUT") ||
		!strings.Contains(err.Error(), "next safe action: retry") {
		t.Errorf("a failed operation: %v %v", done, err)
	}
}

// Issue 22, item 3: the HEALTH column of orders.
func TestHealthColumn(t *testing.T) {
	for conds, want := range map[string]string{
		`[]`: "",
		`[{"type":"Healthy","status":"True","reason":"Healthy"}]`:   "healthy",
		`[{"type":"Healthy","status":"False","reason":"Degraded"}]`: "degraded",
		`[{"type":"Healthy","status":"False","reason":"Failed"}]`:   "failed",
	} {
		o, err := decodeObject([]byte(`{"conditions":` + conds + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := health(o, goldenNow); got != want {
			t.Errorf("health(%s) = %q, want %q", conds, got, want)
		}
	}
}

// Issue 22, item 16: a 400's fields and an INVALID_POLICY's errors are
// printed once, not again in the detail that lists them; a detail that
// says more is kept. Issue 46, item 14: a field the server names by its
// path in the catalog item is printed so, with its request field and
// detail on the next line.
func TestPrintError_TextOnce(t *testing.T) {
	problem := func(body string) error {
		rsp := &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/problem+json"}}}
		return client.Check(rsp, []byte(body))
	}
	for body, want := range map[string]string{
		`{"title":"Invalid argument","status":400,"reason":"INVALID_ARGUMENT","detail":"invalid argument: user_values[0].path: is not editable",` +
			`"fields":[{"field":"user_values[0].path","message":"is not editable"}]}`: "steward: Invalid argument (400 INVALID_ARGUMENT)\n" +
			"  - user_values[0].path: is not editable\n",
		`{"title":"Invalid policy","status":400,"reason":"INVALID_POLICY","detail":"invalid policy: 1:1: rego_parse_error; no main rule",` +
			`"errors":["1:1: rego_parse_error","no main rule"],"policy_id":"p"}`: "steward: Invalid policy (400 INVALID_POLICY)\n" +
			"  - 1:1: rego_parse_error\n  - no main rule\n  policy_id: p\n",
		`{"title":"Invalid argument","status":400,"reason":"INVALID_ARGUMENT",` +
			`"detail":"invalid argument: image (Image): does not have the form this field takes; replicas: must be at least 1",` +
			`"fields":[{"field":"user_values[0].value","path":"image","display_name":"Image",` +
			`"message":"does not have the form this field takes","detail":"pattern ^[a-z]+$"},` +
			`{"field":"user_values[1].value","path":"replicas","message":"must be at least 1"}]}`: "steward: Invalid argument (400 INVALID_ARGUMENT)\n" +
			"  - image (Image): does not have the form this field takes\n    user_values[0].value; pattern ^[a-z]+$\n" +
			"  - replicas: must be at least 1\n    user_values[1].value\n",
		`{"title":"Invalid argument","status":400,"reason":"INVALID_ARGUMENT","detail":"the body and ?id= differ",` +
			`"fields":[{"field":"id","message":"is b"}]}`: "steward: Invalid argument (400 INVALID_ARGUMENT)\n" +
			"  the body and ?id= differ\n  - id: is b\n",
	} {
		var b strings.Builder
		PrintError(&b, "steward order", problem(body))
		if b.String() != want {
			t.Errorf("PrintError:\n%s\nwant:\n%s", b.String(), want)
		}
	}
}

func TestApply_TokenSaysHowToMakeOne(t *testing.T) {
	_, err := planApply(map[string]any{"kind": "tokens", "name": "x"})
	if ExitCode(err) != 2 || !strings.Contains(err.Error(), "steward token create") || strings.Contains(err.Error(), "does not create") {
		t.Errorf("apply of a token: %v", err)
	}
}
