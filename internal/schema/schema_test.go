package schema

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/invalid"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason string
		schema string
		// wantFields are the failing fields; nil means the schema compiles.
		wantFields []string
	}{
		"Empty":          {reason: "{} accepts everything and is a schema.", schema: `{}`},
		"Declares2020":   {reason: "The 2020-12 dialect may be named.", schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`},
		"UnknownKeyword": {reason: "Unknown keywords are annotations.", schema: `{"type":"object","x-ui-widget":"slider","properties":{"a":{"x-order":1}}}`},
		"Modifiers": {
			reason: "Every x-modifier value of API.md compiles.",
			schema: `{"properties":{"a":{"x-modifier":"r"},"b":{"x-modifier":"rw"},"c":{"x-modifier":"rw+"}}}`,
		},
		"LocalRef": {reason: "References inside the document resolve.", schema: `{"$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`},
		"NotJSON":  {reason: "The schema must be JSON.", schema: `{"type":`, wantFields: []string{"schema"}},
		"NotAnObject": {
			reason: "A service type schema is a document, not a boolean or array.", schema: `true`, wantFields: []string{"schema"},
		},
		"OtherDialect": {
			reason: "Only 2020-12 is accepted.", schema: `{"$schema":"http://json-schema.org/draft-07/schema#"}`, wantFields: []string{"schema.$schema"},
		},
		"BadType": {
			reason: "A schema that breaks the metaschema names the keyword.", schema: `{"properties":{"count":{"type":"int"}}}`,
			wantFields: []string{"schema.properties.count.type"},
		},
		"BadMinimum": {
			reason: "Keyword values are checked at any depth.", schema: `{"items":{"minimum":"1"}}`,
			wantFields: []string{"schema.items.minimum"},
		},
		"BadModifier": {
			reason: "x-modifier is r, rw or rw+.", schema: `{"properties":{"a":{"x-modifier":"w"}}}`,
			wantFields: []string{"schema.properties.a.x-modifier"},
		},
		"BadUniqueBy": {
			reason: "x-unique-by names a property.", schema: `{"properties":{"a":{"x-unique-by":3}}}`,
			wantFields: []string{"schema.properties.a.x-unique-by"},
		},
		"BadRegex": {
			reason: "Patterns must compile with Go's regexp.", schema: `{"pattern":"(?=a)"}`, wantFields: []string{"schema.pattern"},
		},
		"DanglingRef": {
			reason: "A reference to nothing is refused.", schema: `{"$ref":"#/$defs/nope"}`, wantFields: []string{"schema"},
		},
		"RemoteRef": {
			reason: "Nothing is fetched over the network.", schema: `{"$ref":"https://example.com/schema.json"}`, wantFields: []string{"schema"},
		},
		"FileRef": {
			reason: "Nothing is read from the local disk.", schema: `{"properties":{"a":{"$ref":"file:///etc/passwd"}}}`, wantFields: []string{"schema"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := Check(json.RawMessage(tc.schema))
			if tc.wantFields == nil {
				if err != nil {
					t.Errorf("%s\nCheck(%s) = %v, want nil", tc.reason, tc.schema, err)
				}
				return
			}
			var inv *invalid.Error
			if !errors.As(err, &inv) {
				t.Fatalf("%s\nCheck(%s) = %v, want an *invalid.Error", tc.reason, tc.schema, err)
			}
			var got []string
			for _, f := range inv.Fields {
				got = append(got, f.Field)
				if f.Message == "" {
					t.Errorf("%s\nfield %s has no message", tc.reason, f.Field)
				}
			}
			if diff := cmp.Diff(tc.wantFields, got); diff != "" {
				t.Errorf("%s\nCheck(%s) fields: -want +got:\n%s", tc.reason, tc.schema, diff)
			}
		})
	}
}

// TestValidate_Messages covers the wording and paths of keywords the built-in
// schemas do not use but a stored service type may.
func TestValidate_Messages(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason string
		schema string
		value  string
		want   []invalid.Field
	}{
		"Numbers": {
			reason: "Numeric bounds are written as numbers.",
			schema: `{"properties":{"a":{"exclusiveMinimum":0},"b":{"exclusiveMaximum":1.5},"c":{"multipleOf":5},"d":{"maximum":10}}}`,
			value:  `{"a":0,"b":2,"c":7,"d":11}`,
			want: []invalid.Field{
				{Field: "spec.a", Message: "must be greater than 0"},
				{Field: "spec.b", Message: "must be less than 1.5"},
				{Field: "spec.c", Message: "must be a multiple of 5"},
				{Field: "spec.d", Message: "must be at most 10"},
			},
		},
		"Lengths": {
			reason: "Length and size bounds are counted.",
			schema: `{"properties":{"a":{"minLength":2},"b":{"maxItems":1},"c":{"minProperties":1},"d":{"maxProperties":1}}}`,
			value:  `{"a":"x","b":[1,2],"c":{},"d":{"x":1,"y":2}}`,
			want: []invalid.Field{
				{Field: "spec.a", Message: "must be at least 2 characters long"},
				{Field: "spec.b", Message: "must have at most 1 item"},
				{Field: "spec.c", Message: "must have at least 1 property"},
				{Field: "spec.d", Message: "must have at most 1 property"},
			},
		},
		"Closed": {
			reason: "A stored type may close an object; each extra property is named.",
			schema: `{"properties":{"a":{}},"additionalProperties":false}`,
			value:  `{"a":1,"b":2,"c":3}`,
			want: []invalid.Field{
				{Field: "spec.b", Message: "is not allowed"},
				{Field: "spec.c", Message: "is not allowed"},
			},
		},
		"UnevaluatedFalse": {
			reason: "unevaluatedProperties: false names the property too.",
			schema: `{"properties":{"a":{}},"unevaluatedProperties":false}`,
			value:  `{"a":1,"b":2}`,
			want:   []invalid.Field{{Field: "spec.b", Message: "is not allowed"}},
		},
		"DependentRequired": {
			reason: "A dependent property is named where it is missing.",
			schema: `{"dependentRequired":{"tls":["cert"]}}`,
			value:  `{"tls":true}`,
			want:   []invalid.Field{{Field: "spec.cert", Message: "is required when tls is set"}},
		},
		"PropertyNames": {
			reason: "A refused property name is named.",
			schema: `{"propertyNames":{"pattern":"^[a-z]+$"}}`,
			value:  `{"ok":1,"Bad":2}`,
			want:   []invalid.Field{{Field: "spec.Bad", Message: "is not an allowed property name"}},
		},
		"UniqueItems": {
			reason: "The later duplicate is named.",
			schema: `{"properties":{"tags":{"uniqueItems":true}}}`,
			value:  `{"tags":["a","b","a"]}`,
			want:   []invalid.Field{{Field: "spec.tags[2]", Message: "must be unique, but equals item 0"}},
		},
		"ContainsWithoutDescription": {
			reason: "contains without a description still says what is missing.",
			schema: `{"properties":{"tags":{"contains":{"const":"x"},"minContains":2}}}`,
			value:  `{"tags":["x","y"]}`,
			want:   []invalid.Field{{Field: "spec.tags", Message: "must include at least 2 matching items"}},
		},
		"Format": {
			reason: "Formats are asserted.",
			schema: `{"properties":{"email":{"format":"email"},"ip":{"format":"ipv4"}}}`,
			value:  `{"email":"nope","ip":"300.1.1.1"}`,
			want: []invalid.Field{
				{Field: "spec.email", Message: "must be a valid email"},
				{Field: "spec.ip", Message: "must be a valid ipv4"},
			},
		},
		"Const": {
			reason: "const shows the wanted value as JSON.",
			schema: `{"properties":{"kind":{"const":"web"},"n":{"enum":[1]}}}`,
			value:  `{"kind":"db","n":2}`,
			want: []invalid.Field{
				{Field: "spec.kind", Message: `must be "web"`},
				{Field: "spec.n", Message: "must be 1"},
			},
		},
		"OneOfSeveral": {
			reason: "Matching two alternatives of oneOf is one failure at the value.",
			schema: `{"properties":{"size":{"oneOf":[{"type":"integer"},{"minimum":0}]}}}`,
			value:  `{"size":3}`,
			want:   []invalid.Field{{Field: "spec.size", Message: "must match exactly one of the allowed forms, but matches several"}},
		},
		"OneOfRequired": {
			reason: "oneOf over required properties names them.",
			schema: `{"oneOf":[{"required":["cidr"]},{"required":["start","end"]}]}`,
			value:  `{}`,
			want:   []invalid.Field{{Field: "spec", Message: "must include exactly one of cidr or start and end"}},
		},
		"AnyOfClosest": {
			reason: "A failed anyOf reports the alternative with the fewest failures.",
			schema: `{"properties":{"port":{"anyOf":[{"type":"string","pattern":"^[a-z]+$","minLength":3},{"type":"integer","minimum":1}]}}}`,
			value:  `{"port":"8"}`,
			want: []invalid.Field{
				{Field: "spec.port", Message: "does not have the form this field takes", Detail: "pattern ^[a-z]+$"},
				{Field: "spec.port", Message: "must be at least 3 characters long"},
			},
		},
		"PatternDescribed": {
			reason: "A pattern is said in the schema's words where it has them; the pattern is the detail, cut short.",
			schema: `{"properties":{"image":{"type":"string","description":"A registry reference, lowercase.",` +
				`"pattern":"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$"}}}`,
			value: `{"image":"Not An Image"}`,
			want: []invalid.Field{{Field: "spec.image",
				Message: "does not have the form this field takes: A registry reference, lowercase.",
				Detail:  "pattern ^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(…"}},
		},
		"AnyOfTie": {
			reason: "On a tie the first alternative is reported.",
			schema: `{"properties":{"port":{"anyOf":[{"type":"integer"},{"type":"string"}]}}}`,
			value:  `{"port":true}`,
			want:   []invalid.Field{{Field: "spec.port", Message: "must be an integer, not a boolean"}},
		},
		"Not": {
			reason: "not is reported at the value.",
			schema: `{"properties":{"name":{"not":{"const":"admin"}}}}`,
			value:  `{"name":"admin"}`,
			want:   []invalid.Field{{Field: "spec.name", Message: `must not match the schema under "not"`}},
		},
		"IfThen": {
			reason: "Failures under then are reported like any other.",
			schema: `{"if":{"properties":{"kind":{"const":"tls"}}},"then":{"required":["cert"]}}`,
			value:  `{"kind":"tls"}`,
			want:   []invalid.Field{{Field: "spec.cert", Message: "is required"}},
		},
		"NestedArrays": {
			reason: "Indices and keys compose; a numeric property name stays a property.",
			schema: `{"properties":{"m":{"items":{"items":{"type":"string"}}},"o":{"properties":{"0":{"type":"string"}}}}}`,
			value:  `{"m":[["a"],["b",1]],"o":{"0":1}}`,
			want: []invalid.Field{
				{Field: "spec.m[1][1]", Message: "must be a string, not a number"},
				{Field: "spec.o[\"0\"]", Message: "must be a string, not a number"},
			},
		},
		"Duplicates": {
			reason: "The same failure reached twice is reported once.",
			schema: `{"allOf":[{"required":["a"]},{"required":["a"]}]}`,
			value:  `{}`,
			want:   []invalid.Field{{Field: "spec.a", Message: "is required"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := Compile(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatalf("Compile(%s): %v", tc.schema, err)
			}
			var v any
			if err := json.Unmarshal([]byte(tc.value), &v); err != nil {
				t.Fatalf("decode %s: %v", tc.value, err)
			}
			err = s.Validate("spec", v)
			var got *invalid.Error
			if !errors.As(err, &got) {
				t.Fatalf("%s\nvalidate(%s) = %v, want an *invalid.Error", tc.reason, tc.value, err)
			}
			if diff := cmp.Diff(tc.want, got.Fields); diff != "" {
				t.Errorf("%s\nvalidate(%s) fields: -want +got:\n%s", tc.reason, tc.value, diff)
			}
		})
	}
}
