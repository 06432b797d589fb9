package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
)

// gadgetSpec documents a resource whose id, kind and create_time are fixed
// at create; kind and create_time are output-only in its PATCH body.
const gadgetSpec = `
openapi: 3.0.3
info: {title: t, version: v1}
paths:
  /api/v1/gadgets/{gadget_id}:
    parameters:
      - {name: gadget_id, in: path, required: true, schema: {type: string}}
    get:
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Gadget"}}}}
    patch:
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              properties:
                id: {type: string}
                name: {type: string}
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Gadget"}}}}
components:
  schemas:
    Gadget:
      type: object
      x-steward-immutable: [id, kind, create_time]
      properties:
        id: {type: string}
        name: {type: string}
        kind: {type: string}
        create_time: {type: string, format: date-time}
`

// An update naming a member of x-steward-immutable with another value than
// the resource's is refused with invalid.ImmutableError naming each one
// (sorted, with its current value) before its handler runs; the current
// value passes (a time as the same instant in another zone), and a
// resource the GET does not find answers the GET's error.
func TestAPI_ImmutableMembersAreCheckedAgainstTheResource(t *testing.T) {
	t.Parallel()
	spec, _, err := httpapi.LoadSpec(context.Background(), []byte(gadgetSpec))
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Logger: slog.New(slog.NewTextHandler(t.Output(), nil)), Auth: tokenAuth{}, Spec: spec,
		Problems: append(httpapi.BaseProblems(),
			httpapi.Mapping{Match: func(err error) bool { var e *invalid.ImmutableError; return errors.As(err, &e) },
				Status: 400, Reason: "INVALID_ARGUMENT", Title: "Invalid argument"},
			httpapi.Mapping{Err: errWidgetGone, Status: 404, Reason: "WIDGET_NOT_FOUND", Title: "Widget not found"})})
	if err != nil {
		t.Fatal(err)
	}
	gadget := map[string]any{"id": "g1", "name": "old", "kind": "lamp", "create_time": "2026-01-02T03:04:05.5Z"}
	api.Handle("GET /api/v1/gadgets/{gadget_id}", func(w http.ResponseWriter, r *http.Request) error {
		if r.PathValue("gadget_id") != "g1" {
			return errWidgetGone
		}
		return httpapi.WriteJSON(w, http.StatusOK, gadget)
	})
	var updates atomic.Int32
	api.Handle("PATCH /api/v1/gadgets/{gadget_id}", func(w http.ResponseWriter, r *http.Request) error {
		updates.Add(1)
		return httpapi.WriteJSON(w, http.StatusOK, gadget)
	})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	h := &harness{api: api, srv: srv}

	cases := []struct {
		name, path, body string
		status           int
		// fields are an immutable-member problem's.
		fields []invalid.Field
	}{
		{name: "another kind", path: "/api/v1/gadgets/g1", body: `{"name":"new","kind":"fan"}`, status: 400,
			fields: []invalid.Field{{Field: "kind", Message: `cannot be changed (it is "lamp")`}}},
		{name: "every changed member, sorted", path: "/api/v1/gadgets/g1", body: `{"kind":null,"id":"g2"}`, status: 400,
			fields: []invalid.Field{{Field: "id", Message: `cannot be changed (it is "g1")`},
				{Field: "kind", Message: `cannot be changed (it is "lamp")`}}},
		{name: "another instant", path: "/api/v1/gadgets/g1", body: `{"create_time":"2026-01-02T03:04:05Z"}`, status: 400,
			fields: []invalid.Field{{Field: "create_time", Message: `cannot be changed (it is "2026-01-02T03:04:05.5Z")`}}},
		{name: "the current values", path: "/api/v1/gadgets/g1", status: 200,
			body: `{"id":"g1","name":"new","kind":"lamp","create_time":"2026-01-02T05:04:05.500+02:00"}`},
		{name: "a gadget the GET does not find", path: "/api/v1/gadgets/g9", body: `{"kind":"fan"}`, status: 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := updates.Load()
			a := h.do(t, "PATCH", tc.path, tc.body)
			if a.status != tc.status {
				t.Fatalf("status = %d, want %d; body %s", a.status, tc.status, a.body)
			}
			if ran := updates.Load() != before; ran != (tc.status == 200) {
				t.Errorf("the update handler ran: %v, want %v", ran, tc.status == 200)
			}
			if tc.fields == nil {
				return
			}
			if got := a.reason(t); got != "INVALID_ARGUMENT" {
				t.Fatalf("reason = %s, want INVALID_ARGUMENT", got)
			}
			var p struct{ Fields []invalid.Field }
			if err := json.Unmarshal(a.body, &p); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.fields, p.Fields); diff != "" {
				t.Errorf("fields: -want +got:\n%s", diff)
			}
		})
	}
}
