package ctl

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
