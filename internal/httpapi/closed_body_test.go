package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
)

// A body whose schema is closed (additionalProperties: false) refuses the
// members it does not list, naming every one of them, at the level they
// are at; members of free-form objects inside it pass (issue 13).
func TestAPI_UnknownFieldsOfAClosedBodyAreNamed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, httpapi.Config{})
	const notAField = "is not a field of this request"
	cases := []struct {
		name, body string
		// fields are the problem's fields and messages; none means 201.
		fields []invalid.Field
	}{
		{name: "known members only", body: `{"name":"a","size":{"count":1},"note":null}`},
		{name: "free-form labels take any key", body: `{"name":"a","labels":{"colour":"red","uservalues":"x"}}`},
		{name: "one unknown member", body: `{"name":"a","colour":"red"}`,
			fields: []invalid.Field{{Field: "colour", Message: notAField}}},
		{name: "every unknown member, sorted", body: `{"uservalues":[],"name":"a","colour":"red"}`,
			fields: []invalid.Field{{Field: "colour", Message: notAField}, {Field: "uservalues", Message: notAField}}},
		{name: "unknown member alone, required one missing", body: `{"colour":"red"}`,
			fields: []invalid.Field{{Field: "colour", Message: notAField}}},
		{name: "null is no excuse", body: `{"name":"a","colour":null}`,
			fields: []invalid.Field{{Field: "colour", Message: notAField}}},
		{name: "nested closed object names the path", body: `{"name":"a","size":{"count":1,"unit":"cm"}}`,
			fields: []invalid.Field{{Field: "size.unit", Message: notAField}}},
		// A create that takes ?id= takes the id from its body too (issue 22).
		{name: "id names a new resource", body: `{"id":"s-1","name":"a"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := h.do(t, "POST", "/api/v1/sprockets", tc.body)
			if tc.fields == nil {
				if a.status != http.StatusCreated {
					t.Fatalf("status = %d, want 201; body %s", a.status, a.body)
				}
				return
			}
			if a.status != http.StatusBadRequest || a.reason(t) != "INVALID_ARGUMENT" {
				t.Fatalf("answer %d %s, want 400 INVALID_ARGUMENT", a.status, a.body)
			}
			var p struct {
				Detail string          `json:"detail"`
				Fields []invalid.Field `json:"fields"`
			}
			if err := json.Unmarshal(a.body, &p); err != nil {
				t.Fatal(err)
			}
			if len(p.Fields) != len(tc.fields) {
				t.Fatalf("fields = %+v, want %+v", p.Fields, tc.fields)
			}
			for i, f := range tc.fields {
				if p.Fields[i] != f {
					t.Errorf("fields[%d] = %+v, want %+v", i, p.Fields[i], f)
				}
				if !strings.Contains(p.Detail, f.Field+": "+notAField) {
					t.Errorf("detail %q does not name %q", p.Detail, f.Field)
				}
			}
		})
	}
	// An open body (the widgets') still ignores what it does not list.
	if a := h.do(t, "POST", "/api/v1/widgets", `{"name":"a","colour":"red"}`); a.status != http.StatusCreated {
		t.Fatalf("open body with an extra member: %d %s, want 201", a.status, a.body)
	}
}

// Every JSON answer ends with exactly one newline, as encoding/json's
// Encoder ends a value: WriteJSON, WriteJSONAppend, problems, and the
// OpenAPI document LoadSpec renders (issue 13).
func TestJSONAnswers_EndWithOneNewline(t *testing.T) {
	t.Parallel()
	h := newHarness(t, httpapi.Config{})
	answers := map[string][]byte{
		"WriteJSON": h.do(t, "POST", "/api/v1/widgets", `{"name":"a"}`).body,
		"problem":   h.do(t, "GET", "/api/v1/widgets/x", "").body,
		"unrouted":  h.do(t, "GET", "/api/v1/gadgets", "").body,
		"invalid":   h.do(t, "POST", "/api/v1/sprockets", `{"colour":"red"}`).body,
	}
	rec := httptest.NewRecorder()
	httpapi.WriteJSONAppend(rec, http.StatusOK, func(b []byte) []byte { return append(b, `{"a":1}`...) })
	answers["WriteJSONAppend"] = rec.Body.Bytes()
	_, doc, err := httpapi.LoadSpec(context.Background(), []byte(testSpec))
	if err != nil {
		t.Fatal(err)
	}
	answers["LoadSpec"] = doc
	for name, b := range answers {
		if !bytes.HasSuffix(b, []byte("\n")) || bytes.HasSuffix(b, []byte("\n\n")) {
			t.Errorf("%s: body %q does not end with exactly one newline", name, b)
		}
		if !json.Valid(b) {
			t.Errorf("%s: body %q is not JSON", name, b)
		}
	}
}

// A problem rendered without a request (an Operation's error) has no
// `instance` rather than an empty one.
func TestProblems_RenderHasNoEmptyInstance(t *testing.T) {
	t.Parallel()
	errBroken := errors.New("broken")
	ps := append(httpapi.BaseProblems(), httpapi.Mapping{Err: errBroken, Status: 409, Reason: "BROKEN", Title: "Broken"})
	for _, err := range []error{errBroken, errors.New("unknown")} {
		var p map[string]any
		if err := json.Unmarshal(ps.Render(err), &p); err != nil {
			t.Fatal(err)
		}
		if _, ok := p["instance"]; ok {
			t.Errorf("Render(%v) = %v, want no instance", err, p)
		}
		if p["reason"] == "" || p["status"] == nil {
			t.Errorf("Render(%v) = %v, want a reason and a status", err, p)
		}
	}
}
