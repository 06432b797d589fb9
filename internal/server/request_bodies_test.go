package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// openRequestBodies are the POST/PUT/PATCH routes whose JSON body is open on
// purpose (`x-steward-open: true` in api/openapi.yaml): the reports that
// providers, adapters and repair workers send again and again, which a newer
// writer must not have refused for a member this server does not know yet
// (the schemas' descriptions say why). Every other body is closed. Opening
// another one is a reviewed change to this list.
var openRequestBodies = []string{
	"POST /api/v1/projects/{project_id}/app-instances/{app_instance_id}/repair-operations/{repair_operation_id}/report",
	"PUT /api/v1/catalog-item-instances/{catalog_item_instance_id}/adapter-statuses/{adapter}",
	"PUT /api/v1/projects/{project_id}/app-instances/{app_instance_id}/runtime",
	"PUT /api/v1/service-type-instances/{instance_id}/status",
}

// bodyRoute is a documented operation that takes a JSON request body.
type bodyRoute struct {
	method, path string
	schema       *openapi3.Schema
}

func (r bodyRoute) String() string { return r.method + " " + r.path }

// requestBodyRoutes lists the document's POST, PUT and PATCH operations
// with a JSON request body, in path order.
func requestBodyRoutes(t *testing.T) []bodyRoute {
	t.Helper()
	doc := openAPIDocument(t)
	var routes []bodyRoute
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch} {
			op := item.GetOperation(method)
			if op == nil || op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			mt := op.RequestBody.Value.Content.Get("application/json")
			if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
				t.Errorf("%s %s: the request body has no application/json schema", method, path)
				continue
			}
			routes = append(routes, bodyRoute{method, path, mt.Schema.Value})
		}
	}
	slices.SortFunc(routes, func(a, b bodyRoute) int { return strings.Compare(a.String(), b.String()) })
	if len(routes) < 20 {
		t.Fatalf("found %d routes with a JSON body; the document has more", len(routes))
	}
	return routes
}

var dummyParam = regexp.MustCompile(`\{[a-z_]+\}`)

// fill puts dummy ids in path's parameters; project_id is the dev project.
func fill(path string) string {
	return dummyParam.ReplaceAllStringFunc(path, func(p string) string {
		if p == "{project_id}" {
			return "default"
		}
		return "dummy-" + strings.Trim(p, "{}")
	})
}

// fieldsNamed returns the problem's messages for field.
func fieldsNamed(p apitest.Problem, field string) []string {
	var msgs []string
	for _, f := range p.Fields {
		if f["field"] == field {
			msgs = append(msgs, fmt.Sprint(f["message"]))
		}
	}
	return msgs
}

// Every create and update route refuses a member its body does not list,
// with 400 INVALID_ARGUMENT naming it; the routes and their schemas come
// from api/openapi.yaml, so a route added later is checked too, and one
// added open (not closed, not in openRequestBodies) fails here (issue 13).
func TestRequestBodies_UnknownFieldsRefused(t *testing.T) {
	t.Parallel()
	routes := requestBodyRoutes(t)

	// The document first: each body is closed, or open and listed.
	var open []string
	for _, r := range routes {
		closed := r.schema.AdditionalProperties.Has != nil && !*r.schema.AdditionalProperties.Has
		marked := r.schema.Extensions["x-steward-open"] == true
		switch {
		case closed && marked:
			t.Errorf("%s: the body is both closed and x-steward-open", r)
		case !closed && !marked:
			t.Errorf("%s: the body is neither closed (additionalProperties: false) nor marked x-steward-open", r)
		case marked:
			open = append(open, r.String())
		case len(r.schema.AllOf) > 0 || len(r.schema.AnyOf) > 0 || len(r.schema.OneOf) > 0:
			// kin-openapi checks additionalProperties per schema: each
			// branch would refuse the members of the others.
			t.Errorf("%s: a closed body must not be built with allOf/anyOf/oneOf", r)
		}
	}
	if !slices.Equal(open, openRequestBodies) {
		t.Errorf("open request bodies = %q, want exactly %q", open, openRequestBodies)
	}

	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, apitest.Fast)
		for _, r := range routes {
			t.Run(r.String(), func(t *testing.T) {
				resp := s.Do(t, r.method, fill(r.path), map[string]any{"colour": "red"})
				if slices.Contains(openRequestBodies, r.String()) {
					// Open: whatever the answer, it is not about colour.
					if resp.Status == http.StatusBadRequest {
						if p := resp.WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT"); len(fieldsNamed(p, "colour")) > 0 {
							t.Fatalf("an open body refused colour: %s", resp.Body)
						}
					}
					return
				}
				p := resp.WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
				if msgs := fieldsNamed(p, "colour"); len(msgs) != 1 || msgs[0] != "is not a field of this request" {
					t.Fatalf("fields = %v, want colour: is not a field of this request; body %s", p.Fields, resp.Body)
				}
				if !strings.Contains(p.Detail, "colour") {
					t.Errorf("detail %q does not name colour", p.Detail)
				}
			})
		}

		// The mistakes of a user's first ten minutes, on real routes.
		cases := []struct {
			name, method, path string
			body               any
			status             int
			reason             string
			// fields are the members the problem must name, each with
			// a message starting with message.
			fields  []string
			message string
		}{
			{name: "misspelled user_values on an order", method: "POST", path: "/api/v1/catalog-item-instances",
				body:   map[string]any{"catalog_item_id": "small-vm", "uservalues": []any{map[string]any{"path": "vcpu.count", "value": 2}}},
				status: 400, reason: "INVALID_ARGUMENT", fields: []string{"uservalues"}, message: "is not a field of this request"},
			{name: "every unknown member is named", method: "POST", path: "/api/v1/policies",
				body: map[string]any{"display_name": "p", "policy_type": "GLOBAL", "rego_code": "package p\n\nmain := {}\n",
					"colour": "red", "priorty": 5},
				status: 400, reason: "INVALID_ARGUMENT", fields: []string{"colour", "priorty"}, message: "is not a field of this request"},
			{name: "an id in the body that is not ?id=", method: "POST", path: "/api/v1/catalog-items?id=other",
				body:   map[string]any{"id": "small-vm", "service_type": "vm"},
				status: 400, reason: "INVALID_ARGUMENT", fields: []string{"id"}, message: `the body's id "small-vm" is not the query's ?id=other`},
			{name: "unknown member of a merge patch", method: "PATCH", path: "/api/v1/catalog-items/nope",
				body:   map[string]any{"display_name": "x", "colour": nil},
				status: 400, reason: "INVALID_ARGUMENT", fields: []string{"colour"}, message: "is not a field of this request"},
			{name: "a merge patch may still null a member it lists", method: "PATCH", path: "/api/v1/catalog-items/nope",
				body: map[string]any{"display_name": nil}, status: 404, reason: "CATALOG_ITEM_NOT_FOUND"},
			{name: "free-form labels take any key", method: "POST", path: "/api/v1/catalog-item-instances",
				body:   map[string]any{"catalog_item_id": "nope", "labels": map[string]string{"colour": "red"}},
				status: 404, reason: "CATALOG_ITEM_NOT_FOUND"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				p := s.Do(t, tc.method, tc.path, tc.body).WantProblem(t, tc.status, tc.reason)
				if len(p.Fields) != len(tc.fields) {
					t.Fatalf("fields = %v, want %q", p.Fields, tc.fields)
				}
				for _, f := range tc.fields {
					if msgs := fieldsNamed(p, f); len(msgs) != 1 || msgs[0] != tc.message {
						t.Errorf("fields = %v, want %s: %s", p.Fields, f, tc.message)
					}
				}
			})
		}

		// A provider written for DCM registers with DCM's own members
		// beside Steward's: they are listed, accepted and ignored.
		t.Run("DCM registration members are accepted", func(t *testing.T) {
			var got map[string]any
			s.Do(t, "POST", "/api/v1/providers", map[string]any{
				"name": "dcm-sp", "endpoint": "http://127.0.0.1:1", "service_types": []string{"vm"},
				"display_name": "DCM SP", "service_type": "vm", "schema_version": "v1alpha1",
				"operations": []string{"CREATE", "DELETE", "READ"},
				"metadata":   map[string]string{"region_code": "us-east-1", "zone": "a"},
			}).Want(t, http.StatusCreated).JSON(t, &got)
			if got["name"] != "dcm-sp" || got["service_type"] != nil || got["schema_version"] != nil {
				t.Fatalf("registered %v; DCM's members should be ignored", got)
			}
		})
	})
}

// Every JSON answer ends with one newline, as encoding/json's Encoder ends
// a value: resources, lists, problems, the health check and the OpenAPI
// document (issue 13).
func TestJSONAnswers_EndWithNewline(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, apitest.Fast)
	op := startOp(t, s, "rehydrate", "catalog-item-instances/x")
	for _, path := range []string{
		"/api/v1/health",
		"/api/v1/openapi.json",
		"/api/v1/operations",
		"/api/v1/operations/" + op.ID,
		"/api/v1/service-types",
		"/api/v1/operations/nope",
		"/api/v1/nothing-here",
	} {
		r := s.Do(t, "GET", path, nil)
		if !bytes.HasSuffix(r.Body, []byte("\n")) || bytes.HasSuffix(r.Body, []byte("\n\n")) {
			t.Errorf("GET %s: %d body does not end with exactly one newline: ...%q", path, r.Status, r.Body[max(0, len(r.Body)-40):])
		}
		if !json.Valid(r.Body) {
			t.Errorf("GET %s: body is not JSON", path)
		}
	}
	r := s.Do(t, "POST", "/api/v1/catalog-items", map[string]any{"colour": "red"})
	if !bytes.HasSuffix(r.Body, []byte("}\n")) {
		t.Errorf("400 body %q does not end with a newline", r.Body)
	}
}

// A failed Operation's problem names the operation in `instance`
// (urn:steward:operation:<id>) instead of answering "" (issue 13).
func TestOperations_FailedOperationProblemNamesTheOperation(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, apitest.Fast)
		op := startOp(t, s, "rehydrate", "catalog-item-instances/x")
		if err := s.DB().InTx(context.Background(), func(tx *store.Tx) error {
			_, err := s.Operations().FinishTx(context.Background(), tx, op.ID,
				operations.FinishParams{Err: fmt.Errorf("look up: %w", operations.ErrNotFound)})
			return err
		}); err != nil {
			t.Fatalf("finish: %v", err)
		}
		var got operation
		s.Do(t, "GET", "/api/v1/operations/"+op.ID, nil).Want(t, http.StatusOK).JSON(t, &got)
		if !got.Done || got.Error["reason"] != "OPERATION_NOT_FOUND" || got.Error["status"] != float64(404) {
			t.Fatalf("operation = %+v, want done with the table's problem", got)
		}
		if want := "urn:steward:operation:" + op.ID; got.Error["instance"] != want {
			t.Fatalf("error.instance = %v, want %q; error %v", got.Error["instance"], want, got.Error)
		}
	})
}
