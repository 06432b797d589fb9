package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
)

const boundsSpec = `
openapi: 3.0.3
info: {title: t, version: v1}
paths:
  /api/v1/gadgets:
    get:
      parameters:
        - {name: colour, in: query, schema: {type: string, maxLength: 5}}
      responses: {"200": {description: ok}}
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              properties:
                name: {type: string, minLength: 2, maxLength: 8}
                tags: {type: array, maxItems: 2, items: {type: string, maxLength: 3}}
                labels:
                  type: object
                  maxProperties: 2
                  additionalProperties: {type: string, maxLength: 1}
      responses: {"201": {description: ok}}
`

// A value past a bound of the document is refused with 400
// INVALID_ARGUMENT naming the field and the bound, in the words the
// checks of specs use (issue 45, finding 8); the value is not echoed.
func TestAPI_BoundsRefusedNamingFieldAndBound(t *testing.T) {
	t.Parallel()
	spec, _, err := httpapi.LoadSpec(context.Background(), []byte(boundsSpec))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, httpapi.Config{Spec: spec})
	ok := func(w http.ResponseWriter, _ *http.Request) error { w.WriteHeader(http.StatusCreated); return nil }
	h.api.Handle("POST /api/v1/gadgets", ok)
	h.api.Handle("GET /api/v1/gadgets", ok)
	long := strings.Repeat("x", 1_000_000) // as the probe sent, within the 1 MiB body limit
	cases := []struct {
		name, method, path, body string
		project                  string
		want                     invalid.Field // zero: 201
	}{
		{name: "within every bound", method: "POST", path: "/api/v1/gadgets",
			body: `{"name":"gadget","tags":["a","bcd"],"labels":{"a":"b","c":"d"}}`},
		{name: "string too long", method: "POST", path: "/api/v1/gadgets", body: `{"name":"` + long + `"}`,
			want: invalid.Field{Field: "name", Message: "must be at most 8 characters long"}},
		{name: "string too short", method: "POST", path: "/api/v1/gadgets", body: `{"name":"g"}`,
			want: invalid.Field{Field: "name", Message: "must be at least 2 characters long"}},
		{name: "too many items", method: "POST", path: "/api/v1/gadgets", body: `{"tags":["a","b","c"]}`,
			want: invalid.Field{Field: "tags", Message: "must have at most 2 items"}},
		{name: "an item too long", method: "POST", path: "/api/v1/gadgets", body: `{"tags":["a","bcde"]}`,
			want: invalid.Field{Field: "tags.1", Message: "must be at most 3 characters long"}},
		{name: "too many members", method: "POST", path: "/api/v1/gadgets", body: `{"labels":{"a":"1","b":"2","c":"3"}}`,
			want: invalid.Field{Field: "labels", Message: "must have at most 2 members"}},
		{name: "a member's value too long", method: "POST", path: "/api/v1/gadgets", body: `{"labels":{"a":"12"}}`,
			want: invalid.Field{Field: "labels.a", Message: "must be at most 1 character long"}},
		{name: "query parameter too long", method: "GET", path: "/api/v1/gadgets?colour=vermilion",
			want: invalid.Field{Field: "colour", Message: "must be at most 5 characters long"}},
		{name: "project of 63 characters", method: "GET", path: "/api/v1/gadgets", project: strings.Repeat("p", 63)},
		{name: "project too long", method: "GET", path: "/api/v1/gadgets", project: strings.Repeat("p", 64),
			want: invalid.Field{Field: "Steward-Project", Message: "must be at most 63 characters long"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tc.project != "" {
				req.Header.Set("Steward-Project", tc.project)
			}
			rec := httptest.NewRecorder()
			h.api.ServeHTTP(rec, req)
			if tc.want == (invalid.Field{}) {
				if rec.Code != http.StatusCreated {
					t.Fatalf("status = %d, want 201; body %s", rec.Code, rec.Body)
				}
				return
			}
			var p struct {
				Reason string          `json:"reason"`
				Detail string          `json:"detail"`
				Fields []invalid.Field `json:"fields"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != http.StatusBadRequest {
				t.Fatalf("answer %d %.300s, want a 400 problem", rec.Code, rec.Body)
			}
			if rec.Body.Len() > 1000 {
				t.Errorf("the problem has %d bytes: it echoes the value", rec.Body.Len())
			}
			if diff := cmp.Diff([]invalid.Field{tc.want}, p.Fields); p.Reason != "INVALID_ARGUMENT" || diff != "" {
				t.Fatalf("reason %s, fields (-want +got):\n%s", p.Reason, diff)
			}
			if want := tc.want.Field + ": " + tc.want.Message; !strings.Contains(p.Detail, want) {
				t.Errorf("detail %q does not say %q", p.Detail, want)
			}
		})
	}
}
