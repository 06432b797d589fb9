package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParsePath(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason  string
		path    string
		want    string // canonical form
		wantErr string // substring of the error
	}{
		"Name":            {reason: "One property name.", path: "replicas", want: "replicas"},
		"Dotted":          {reason: "Names separated by dots.", path: "vcpu.count", want: "vcpu.count"},
		"Index":           {reason: "An array index in brackets.", path: "process.env[0].value", want: "process.env[0].value"},
		"NestedIndexes":   {reason: "Arrays of arrays.", path: "matrix[1][20]", want: "matrix[1][20]"},
		"QuotedKey":       {reason: "A name that is not an identifier is quoted.", path: `metadata.labels["app.kubernetes.io/name"]`, want: `metadata.labels["app.kubernetes.io/name"]`},
		"QuotedSimple":    {reason: "A quoted identifier is written back plainly.", path: `metadata["labels"].team`, want: "metadata.labels.team"},
		"QuotedFirst":     {reason: "The first name may be quoted.", path: `["a b"].c`, want: `["a b"].c`},
		"DashUnderscore":  {reason: "Names may hold dashes and underscores.", path: "provider_hints.kube-virt", want: "provider_hints.kube-virt"},
		"Empty":           {reason: "A path is required.", path: "", wantErr: "is required"},
		"LeadingDot":      {reason: "No empty first name.", path: ".a", wantErr: "property names separated by dots"},
		"DoubleDot":       {reason: "No empty name in between.", path: "a..b", wantErr: "property names separated by dots"},
		"TrailingDot":     {reason: "No empty last name.", path: "a.", wantErr: "property names separated by dots"},
		"IndexFirst":      {reason: "A spec is an object.", path: "[0].a", wantErr: "must start with a property name"},
		"NegativeIndex":   {reason: "Indexes are not negative.", path: "a[-1]", wantErr: "neither an array index"},
		"LeadingZero":     {reason: "Indexes have one spelling.", path: "a[01]", wantErr: "neither an array index"},
		"PlusIndex":       {reason: "Indexes have one spelling.", path: "a[+1]", wantErr: "neither an array index"},
		"Unclosed":        {reason: "Brackets close.", path: "a[0", wantErr: "unclosed"},
		"UnclosedQuote":   {reason: "Quotes close.", path: `a["b`, wantErr: "unterminated"},
		"EmptyQuotedKey":  {reason: "A quoted name is not empty.", path: `a[""]`, wantErr: "bad quoted property name"},
		"BadName":         {reason: "A name with other characters must be quoted.", path: "a.b c", wantErr: `write it as ["b c"]`},
		"DigitName":       {reason: "A name does not start with a digit.", path: "a.0", wantErr: "not a property name"},
		"JunkAfterIndex":  {reason: "A dot or bracket follows an index.", path: "a[0]b", wantErr: "where a '.' or '[' must follow a[0]"},
		"DotBeforeIndex":  {reason: "An index follows its array directly.", path: "a.[0]", wantErr: "property names separated by dots"},
		"TooLong":         {reason: "Paths are bounded.", path: strings.Repeat("a", maxPathLen+1), wantErr: "at most 512 characters"},
		"TooManySteps":    {reason: "Paths are bounded.", path: strings.Repeat("a.", maxPathSteps) + "a", wantErr: "at most 32 steps"},
		"UnicodeNotIdent": {reason: "Only ASCII identifiers go unquoted.", path: "caf\u00e9", wantErr: "not a property name"},
		"Selector":        {reason: "An item selected by a property's value.", path: "process.env[name=LOG_LEVEL].value", want: "process.env[name=LOG_LEVEL].value"},
		"SelectorQuoted":  {reason: "A value with other characters is quoted.", path: `disks[name="data disk"]`, want: `disks[name="data disk"]`},
		"SelectorNumber":  {reason: "Numbers select too.", path: "ports[port=8080].protocol", want: "ports[port=8080].protocol"},
		"SelectorFirst":   {reason: "A spec is an object.", path: "[a=b]", wantErr: "must start with a property name"},
		"SelectorEmpty":   {reason: "A selector has a value.", path: "a[b=]", wantErr: "bad selector value"},
		"SelectorOpen":    {reason: "Selectors close.", path: "a[b=c", wantErr: "unclosed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := ParsePath(tc.path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nparsePath(%q) error = %v, want one containing %q", tc.reason, tc.path, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nparsePath(%q): %v", tc.reason, tc.path, err)
			}
			if got := p.String(); got != tc.want {
				t.Errorf("%s\nparsePath(%q).String() = %q, want %q", tc.reason, tc.path, got, tc.want)
			}
		})
	}
}

func TestSetPath(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason  string
		in      string // JSON object
		path    string
		value   any
		want    string // JSON object
		wantErr string
	}{
		"CreatesObjects": {reason: "Missing objects are created.", in: `{}`, path: "vcpu.count", value: 2.0,
			want: `{"vcpu": {"count": 2}}`},
		"KeepsSiblings": {reason: "Only the named property changes.", in: `{"vcpu": {"count": 1, "model": "x"}}`, path: "vcpu.count", value: 4.0,
			want: `{"vcpu": {"count": 4, "model": "x"}}`},
		"ReplacesWhole": {reason: "A value replaces what was there.", in: `{"vcpu": {"count": 1}}`, path: "vcpu", value: map[string]any{"count": 3.0},
			want: `{"vcpu": {"count": 3}}`},
		"CreatesArray": {reason: "A step followed by an index creates an array.", in: `{}`, path: "process.env[0].value", value: "x",
			want: `{"process": {"env": [{"value": "x"}]}}`},
		"IntoArrayItem": {reason: "An existing item is changed in place.", in: `{"env": [{"name": "A", "value": "1"}]}`, path: "env[0].value", value: "2",
			want: `{"env": [{"name": "A", "value": "2"}]}`},
		"Appends": {reason: "The index just past the end appends.", in: `{"env": [{"name": "A"}]}`, path: "env[1].name", value: "B",
			want: `{"env": [{"name": "A"}, {"name": "B"}]}`},
		"ReplacesItem": {reason: "An index may name a scalar item.", in: `{"args": ["a", "b"]}`, path: "args[1]", value: "c",
			want: `{"args": ["a", "c"]}`},
		"NullIsMissing": {reason: "A null on the way is replaced.", in: `{"vcpu": null}`, path: "vcpu.count", value: 1.0,
			want: `{"vcpu": {"count": 1}}`},
		"QuotedKey": {reason: "A quoted name is one property.", in: `{}`, path: `labels["app.kubernetes.io/name"]`, value: "web",
			want: `{"labels": {"app.kubernetes.io/name": "web"}}`},
		"NullValue": {reason: "null is a value like any other.", in: `{"a": 1}`, path: "a", value: nil,
			want: `{"a": null}`},
		"Gap": {reason: "An index never leaves a gap.", in: `{"env": []}`, path: "env[1].name", value: "B",
			wantErr: "cannot set env[1].name: env has 0 item(s), so index 1 would leave a gap"},
		"GapInNew": {reason: "A new array starts at 0.", in: `{}`, path: "env[2]", value: "B",
			wantErr: "index 2 would leave a gap"},
		"ScalarOnTheWay": {reason: "A scalar is not descended into.", in: `{"vcpu": 2}`, path: "vcpu.count", value: 1.0,
			wantErr: "cannot set vcpu.count: vcpu is a number, not an object"},
		"ObjectNotArray": {reason: "An index needs an array.", in: `{"env": {}}`, path: "env[0]", value: 1.0,
			wantErr: "env is an object, not an array"},
		"ArrayNotObject": {reason: "A name needs an object.", in: `{"env": []}`, path: "env.name", value: 1.0,
			wantErr: "env is an array, not an object"},
		"BadPath": {reason: "A path that does not parse is an error.", in: `{}`, path: "a..b", value: 1.0,
			wantErr: "property names"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := spec(t, tc.in)
			err := SetPath(m, tc.path, tc.value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nsetPath(%s, %q) error = %v, want one containing %q", tc.reason, tc.in, tc.path, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nsetPath(%s, %q): %v", tc.reason, tc.in, tc.path, err)
			}
			if diff := cmp.Diff(spec(t, tc.want), m); diff != "" {
				t.Errorf("%s\nsetPath(%s, %q): -want +got:\n%s", tc.reason, tc.in, tc.path, diff)
			}
		})
	}
}

func TestGetPath(t *testing.T) {
	t.Parallel()
	doc := `{"vcpu": {"count": 2}, "env": [{"name": "A"}], "labels": {"a.b": "x"}, "n": null}`
	cases := map[string]struct {
		reason string
		path   string
		want   any
		wantOK bool
	}{
		"Nested":       {reason: "Objects are walked.", path: "vcpu.count", want: 2.0, wantOK: true},
		"Object":       {reason: "An object is a value.", path: "vcpu", want: map[string]any{"count": 2.0}, wantOK: true},
		"ArrayItem":    {reason: "Arrays are walked.", path: "env[0].name", want: "A", wantOK: true},
		"Quoted":       {reason: "Quoted names are looked up whole.", path: `labels["a.b"]`, want: "x", wantOK: true},
		"Null":         {reason: "A null is present.", path: "n", want: nil, wantOK: true},
		"Missing":      {reason: "An absent name has no value.", path: "vcpu.model", wantOK: false},
		"PastEnd":      {reason: "An index past the end has no value.", path: "env[1].name", wantOK: false},
		"ThroughValue": {reason: "A scalar has no properties.", path: "vcpu.count.x", wantOK: false},
		"IndexObject":  {reason: "An object has no indexes.", path: "vcpu[0]", wantOK: false},
		"BadPath":      {reason: "A path that does not parse has no value.", path: "a..b", wantOK: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, ok := GetPath(spec(t, doc), tc.path)
			if ok != tc.wantOK {
				t.Fatalf("%s\ngetPath(%q) ok = %v, want %v", tc.reason, tc.path, ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ngetPath(%q): -want +got:\n%s", tc.reason, tc.path, diff)
			}
		})
	}
}

func TestUnderPath(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason, field, prefix, wantRest string
		wantOK                          bool
	}{
		"Same":       {reason: "A location is under itself.", field: "spec.vcpu", prefix: "spec.vcpu", wantOK: true},
		"Property":   {reason: "A property is under its object.", field: "spec.vcpu.count", prefix: "spec.vcpu", wantRest: ".count", wantOK: true},
		"Index":      {reason: "An item is under its array.", field: "spec.env[0]", prefix: "spec.env", wantRest: "[0]", wantOK: true},
		"LongerName": {reason: "A name that only starts the same is not under it.", field: "spec.vcpus", prefix: "spec.vcpu"},
		"Other":      {reason: "Another location is not under it.", field: "spec.memory", prefix: "spec.vcpu"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rest, ok := UnderPath(tc.field, tc.prefix)
			if ok != tc.wantOK || rest != tc.wantRest {
				t.Errorf("%s\nunderPath(%q, %q) = %q, %v; want %q, %v", tc.reason, tc.field, tc.prefix, rest, ok, tc.wantRest, tc.wantOK)
			}
		})
	}
}

func TestDeepCopy_Independent(t *testing.T) {
	t.Parallel()
	orig := spec(t, `{"a": {"b": [1, {"c": 2}]}}`)
	cp := DeepCopy(orig).(map[string]any)
	if err := SetPath(cp, "a.b[1].c", 3.0); err != nil {
		t.Fatal(err)
	}
	if err := SetPath(cp, "a.b[2]", 4.0); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spec(t, `{"a": {"b": [1, {"c": 2}]}}`), orig); diff != "" {
		t.Errorf("changing a deep copy changed the original: -want +got:\n%s", diff)
	}
}

// spec decodes a JSON object for a test.
func spec(tb testing.TB, s string) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		tb.Fatalf("decode %s: %v", s, err)
	}
	return m
}

func TestPath_Selectors(t *testing.T) {
	t.Parallel()
	doc := `{"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "B", "value": "3"}],
		"ports": [{"port": 80}, {"port": 8080, "protocol": "tcp"}]}`
	m := spec(t, doc)
	if v, ok := GetPath(m, "env[name=A].value"); !ok || v != "1" {
		t.Errorf("get env[name=A].value = %v, %v", v, ok)
	}
	if v, ok := GetPath(m, "ports[port=8080].protocol"); !ok || v != "tcp" {
		t.Errorf("get ports[port=8080].protocol = %v, %v", v, ok)
	}
	for _, path := range []string{"env[name=B].value", "env[name=C].value", "ports[name=A]"} {
		if v, ok := GetPath(m, path); ok {
			t.Errorf("get %s = %v, want none (ambiguous or missing)", path, v)
		}
	}
	if err := SetPath(m, "env[name=A].value", "9"); err != nil {
		t.Fatal(err)
	}
	if v, _ := GetPath(m, "env[0].value"); v != "9" {
		t.Errorf("after set, env[0].value = %v", v)
	}
	for path, want := range map[string]string{"env[name=B].value": "more than one item", "env[name=C].value": "matches no item",
		"ports[port=80].protocol.x": ""} {
		err := SetPath(m, path, "x")
		if want == "" {
			if err != nil {
				t.Errorf("set %s: %v", path, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("set %s error = %v, want %q", path, err, want)
		}
	}
}
