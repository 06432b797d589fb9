package adapter

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTemplate_Renders(t *testing.T) {
	t.Parallel()
	data := map[string]any{
		"id": "ABC", "n": int64(3), "empty": "", "name": "  x  ",
		"obj":   map[string]any{"a": []any{int64(1), "two"}},
		"event": map[string]any{"project": "p"},
	}
	names := map[string]bool{"id": true, "n": true, "empty": true, "name": true, "obj": true, "event": true}
	tests := []struct {
		tmpl, want string
	}{
		{"plain text", "plain text"},
		{"{{ .id | lower }}", "abc"},
		{"{{ .id | upper }}-{{ .n }}", "ABC-3"},
		{"{{ .n | lower }}", "3"},
		{"{{ .empty | default \"dflt\" }}", "dflt"},
		{"{{ .id | default \"dflt\" }}", "ABC"},
		{"[{{ .name | trim }}]", "[x]"},
		{"{{ .id | quote }}", `"ABC"`},
		{"{{ .obj | toJson }}", `{"a":[1,"two"]}`},
		{"{{ .event.project }}", "p"},
		{"{{ range .obj.a }}{{ . }};{{ end }}", "1;two;"},
		{"{{ with .obj }}{{ .a }}{{ end }}", "[1 two]"},
	}
	for _, tt := range tests {
		var ps problems
		tmpl := parseText("f", tt.tmpl, names, &ps)
		if len(ps) > 0 {
			t.Errorf("%q: problems %v", tt.tmpl, ps)
			continue
		}
		got, err := tmpl.render(data)
		if err != nil || got != tt.want {
			t.Errorf("%q = %q, %v; want %q", tt.tmpl, got, err, tt.want)
		}
	}
}

func TestTemplate_AMissingKeyIsAnError(t *testing.T) {
	t.Parallel()
	var ps problems
	tmpl := parseText("f", "{{ .obj.nothere }}", map[string]bool{"obj": true}, &ps)
	if _, err := tmpl.render(map[string]any{"obj": map[string]any{}}); err == nil {
		t.Error("render of a missing key succeeded, want missingkey=error")
	}
}

func TestTemplate_ChecksTheNamesItReadsAtLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tmpl    string
		unknown []string
	}{
		{"{{ .a }}{{ .b.c }}", nil},
		{"{{ .nope }}", []string{"nope"}},
		{"{{ if .x }}{{ .y }}{{ else }}{{ .z }}{{ end }}", []string{"x", "y", "z"}},
		{"{{ range .a }}{{ .inner }}{{ $.outer }}{{ end }}", []string{"outer"}},
		{"{{ with .a }}{{ .inner }}{{ end }}", nil},
		{"{{ (.zz).q | lower }}", []string{"zz"}},
		{"{{ printf \"%s\" .pp }}", []string{"pp"}},
	}
	for _, tt := range tests {
		var ps problems
		parseText("f", tt.tmpl, map[string]bool{"a": true, "b": true}, &ps)
		var got []string
		for _, p := range ps {
			got = append(got, p.Message)
		}
		if len(tt.unknown) == 0 {
			if len(ps) != 0 {
				t.Errorf("%q: problems %v, want none", tt.tmpl, got)
			}
			continue
		}
		if len(ps) != 1 || !strings.Contains(ps[0].Message, quoteList(tt.unknown)) {
			t.Errorf("%q: problems %v, want one naming %v", tt.tmpl, got, tt.unknown)
		}
	}
}

func TestValueTemplate_RendersEveryStringLeafAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	manifest := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "{{ .id }}", "labels": map[string]any{"{{ .id }}": "v"}},
		"data":     map[string]any{"list": []any{"{{ .id }}-1", int64(2), true, nil}},
	}
	var ps problems
	vt := parseValue("manifest", manifest, map[string]bool{"id": true}, &ps)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	got, err := vt.render(map[string]any{"id": "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "labels": map[string]any{"{{ .id }}": "v"}},
		"data":     map[string]any{"list": []any{"x-1", int64(2), true, nil}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rendered (-want +got):\n%s", diff)
	}
	if name := manifest["metadata"].(map[string]any)["name"]; name != "{{ .id }}" {
		t.Error("render changed the source manifest")
	}
}
