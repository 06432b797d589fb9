package policy

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestEvaluate_ConstraintStrictness runs two policies constraining one
// field, the second after the first, and checks what the second may say.
func TestEvaluate_ConstraintStrictness(t *testing.T) {
	t.Parallel()
	cases := []struct {
		first, second string
		// keyword is the conflict's keyword; "" means the pair is accepted.
		keyword string
	}{
		// Bounds may only tighten.
		{`{"maximum": 8}`, `{"maximum": 4}`, ""},
		{`{"maximum": 8}`, `{"maximum": 16}`, "maximum"},
		{`{"maximum": 8}`, `{"exclusiveMaximum": 8}`, ""},
		{`{"exclusiveMaximum": 8}`, `{"maximum": 8}`, "maximum"},
		{`{"exclusiveMaximum": 8}`, `{"exclusiveMaximum": 9}`, "exclusiveMaximum"},
		{`{"minimum": 2}`, `{"minimum": 1}`, "minimum"},
		{`{"minimum": 2}`, `{"exclusiveMinimum": 2}`, ""},
		{`{"maxLength": 10}`, `{"maxLength": 11}`, "maxLength"},
		{`{"minItems": 2}`, `{"minItems": 1}`, "minItems"},
		{`{"maxProperties": 3}`, `{"maxProperties": 2}`, ""},
		// Bounds that cross leave nothing.
		{`{"maximum": 4}`, `{"minimum": 8}`, "maximum"},
		{`{"maximum": 4}`, `{"exclusiveMinimum": 4}`, "maximum"},
		{`{"maximum": 4}`, `{"minimum": 4}`, ""},
		{`{"minLength": 5}`, `{"maxLength": 3}`, "minLength"},
		// const and enum.
		{`{"const": "east"}`, `{"const": "east"}`, ""},
		{`{"const": "east"}`, `{"const": "west"}`, "const"},
		{`{"enum": ["a", "b"]}`, `{"enum": ["c", "d"]}`, "enum"},
		{`{"enum": ["a", "b"]}`, `{"enum": ["a"]}`, ""},
		{`{"enum": ["a", "b"]}`, `{"enum": ["a", "b", "c"]}`, ""},      // intersection {a, b}
		{`{"enum": ["a", "b", "c"]}`, `{"enum": ["a", "c", "d"]}`, ""}, // intersection {a, c}
		{`{"enum": ["a", "b"]}`, `{"const": "b"}`, ""},
		{`{"maximum": 8}`, `{"enum": [2, 4, 16]}`, ""}, // narrows to {2, 4}
		{`{"maximum": 8}`, `{"enum": [16, 32]}`, "enum"},
		{`{"const": "b"}`, `{"enum": ["a", "b"]}`, ""},
		{`{"const": "c"}`, `{"enum": ["a", "b"]}`, "enum"},
		{`{"enum": ["a", "b"]}`, `{"const": "c"}`, "const"},
		{`{"maximum": 8}`, `{"const": 16}`, "const"},
		{`{"enum": [2, 4]}`, `{"minimum": 8}`, "enum"},
		{`{"enum": [2, 4]}`, `{"minimum": 3}`, ""},
		{`{"pattern": "^a"}`, `{"const": "bcd"}`, "const"},
		// type may only narrow.
		{`{"type": "number"}`, `{"type": "integer"}`, ""},
		{`{"type": "integer"}`, `{"type": "number"}`, "type"},
		{`{"type": "string"}`, `{"type": "integer"}`, "type"},
		{`{"type": ["string", "null"]}`, `{"type": "string"}`, ""},
		{`{"type": "string"}`, `{"type": ["string", "null"]}`, "type"},
		// multipleOf: a multiple tightens, a divisor loosens, others both apply.
		{`{"multipleOf": 2}`, `{"multipleOf": 4}`, ""},
		{`{"multipleOf": 4}`, `{"multipleOf": 2}`, "multipleOf"},
		{`{"multipleOf": 4}`, `{"multipleOf": 3}`, ""},
		{`{"uniqueItems": true}`, `{"uniqueItems": false}`, "uniqueItems"},
		// Not compared: both apply.
		{`{"pattern": "^a"}`, `{"pattern": "^b"}`, ""},
		{`{"maximum": 8}`, `{"minimum": 1}`, ""},
		{`true`, `{"maximum": 1}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.first+" then "+tc.second, func(t *testing.T) {
			t.Parallel()
			for _, levels := range [][2]Type{{TypeGlobal, TypeTenant}, {TypeTenant, TypeUser}, {TypeGlobal, TypeGlobal}} {
				first := pol("first", levels[0], 1, fmt.Sprintf(`main := {"constraints": {"size": %s}}`, tc.first))
				second := pol("second", levels[1], 2, fmt.Sprintf(`main := {"constraints": {"size": %s}}`, tc.second))
				_, err := evaluate(context.Background(), chainOf(t, first, second), newSchemaCache(), EvaluateParams{Spec: vm()})
				var con *ConflictError
				switch {
				case tc.keyword == "" && err != nil:
					t.Fatalf("%s then %s: the second tightens or adds, yet: %v", levels[0], levels[1], err)
				case tc.keyword == "":
				case !errors.As(err, &con):
					t.Fatalf("%s then %s: error %v, want a conflict on %s", levels[0], levels[1], err, tc.keyword)
				case con.Policy.ID != "second" || con.With == nil || con.With.ID != "first" || con.Field != "size" || con.Keyword != tc.keyword:
					t.Fatalf("%s then %s: conflict %+v (with %+v); want second against first on size, keyword %s",
						levels[0], levels[1], con, con.With, tc.keyword)
				}
			}
		})
	}
}

// TestEvaluate_EnumIntersection is DCM's rule: later enums narrow the field
// to the values all of them admit, the request's value must lie in that
// intersection, and only an empty intersection is a conflict.
func TestEvaluate_EnumIntersection(t *testing.T) {
	t.Parallel()
	region := func(id string, priority int, enum string) Policy {
		return pol(id, TypeGlobal, priority, fmt.Sprintf(`main := {"constraints": {"region": {"enum": %s}}}`, enum))
	}
	first := region("first", 1, `["us-east-1", "us-west-2", "eu-west-1"]`)
	second := region("second", 2, `["us-east-1", "eu-west-1", "ap-south-1"]`)
	ctx := context.Background()
	for _, tc := range []struct {
		value string
		want  *wantErr
	}{
		{"us-east-1", nil},
		{"eu-west-1", nil},
		{"us-west-2", &wantErr{kind: ErrRejected, policy: "second"}}, // only the first admits it
		{"ap-south-1", &wantErr{kind: ErrRejected, policy: "first"}}, // only the second admits it
		{"sa-east-1", &wantErr{kind: ErrRejected, policy: "first"}},  // neither admits it
	} {
		_, err := evaluate(ctx, chainOf(t, first, second), newSchemaCache(), EvaluateParams{Spec: vm("region", tc.value)})
		tc.want.check(t, err, "region "+tc.value)
	}

	// Each later enum shares a value with each earlier one, but the three
	// together share none: the third names the one that removed the last.
	third := region("third", 3, `["us-west-2", "ap-south-1"]`)
	_, err := evaluate(ctx, chainOf(t, first, second, third), newSchemaCache(), EvaluateParams{Spec: vm()})
	var con *ConflictError
	if !errors.As(err, &con) || con.Policy.ID != "third" || con.With == nil || con.With.ID != "second" ||
		con.Field != "region" || con.Keyword != "enum" {
		t.Fatalf("three enums with an empty intersection: %v (%+v), want a conflict of third with second on region, enum", err, con)
	}
}
