package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// labelsOf makes n labels k0…k<n-1>.
func labelsOf(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = "v"
	}
	return m
}

// Every string, list and map a client sets is bounded (issue 45, finding 8:
// a 1,000,000-character display_name and 10,000 labels were accepted). A
// request past a bound is 400 INVALID_ARGUMENT whose field and detail name
// the member and the bound; the bounds the document cannot state (a label
// key's form, the labels an order keeps once a PATCH is merged, DCM's
// metadata once flattened) are the domains'. Nothing refused is stored.
func TestLimits_RequestsPastABoundAreRefused(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s, p := startWithFixtures(t, engine)
		order := func(over map[string]any) map[string]any {
			body := map[string]any{"catalog_item_id": "aep-vm"}
			for k, v := range over {
				body[k] = v
			}
			return body
		}
		policy := func(over map[string]any) map[string]any {
			body := map[string]any{"display_name": "limits", "policy_type": "GLOBAL", "rego_code": "package limits\n\nmain := {}\n"}
			for k, v := range over {
				body[k] = v
			}
			return body
		}
		keyed := func(key string) map[string]string { return map[string]string{key: "v"} }
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=labelled", order(map[string]any{"labels": labelsOf(60)})).
			Want(t, http.StatusCreated)
		cases := []struct {
			name, method, path string
			body               any
			// field and message are the problem's one field.
			field, message string
		}{
			{name: "a display_name of a million characters", method: "POST", path: "/api/v1/catalog-item-instances",
				body:  order(map[string]any{"display_name": strings.Repeat("x", 1_000_000)}),
				field: "display_name", message: "must be at most 256 characters long"},
			{name: "65 labels", method: "POST", path: "/api/v1/catalog-item-instances",
				body:  order(map[string]any{"labels": labelsOf(65)}),
				field: "labels", message: "must have at most 64 members"},
			{name: "10,000 labels", method: "POST", path: "/api/v1/catalog-item-instances",
				body:  order(map[string]any{"labels": labelsOf(10_000)}),
				field: "labels", message: "must have at most 64 members"},
			{name: "a label key of 64 characters", method: "POST", path: "/api/v1/catalog-item-instances",
				body:  order(map[string]any{"labels": keyed(strings.Repeat("k", 64))}),
				field: `labels["` + strings.Repeat("k", 64) + `"]`, message: "the key is not a label key: its name must be at most 63 characters long"},
			{name: "a label key that is not one", method: "POST", path: "/api/v1/catalog-item-instances",
				body:  order(map[string]any{"labels": keyed("team name")}),
				field: `labels["team name"]`, message: "the key is not a label key: its name must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit"},
			{name: "a label value of 64 characters", method: "POST", path: "/api/v1/catalog-item-instances",
				body:  order(map[string]any{"labels": map[string]string{"env": strings.Repeat("v", 64)}}),
				field: "labels.env", message: "must be at most 63 characters long"},
			{name: "a PATCH that leaves an order 65 labels", method: "PATCH", path: "/api/v1/catalog-item-instances/labelled",
				body:  map[string]any{"labels": map[string]string{"n0": "v", "n1": "v", "n2": "v", "n3": "v", "n4": "v"}},
				field: "labels", message: "must leave the order at most 64 labels, not 65"},
			{name: "a PATCH of a display_name too long", method: "PATCH", path: "/api/v1/catalog-item-instances/labelled",
				body:  map[string]any{"display_name": strings.Repeat("x", 257)},
				field: "display_name", message: "must be at most 256 characters long"},
			{name: "a policy of more than 256 KiB", method: "POST", path: "/api/v1/policies",
				body:  policy(map[string]any{"rego_code": "package limits\n\nmain := {}\n" + strings.Repeat("#", 256<<10)}),
				field: "rego_code", message: "must be at most 262144 characters long"},
			{name: "a policy's label_selector key", method: "POST", path: "/api/v1/policies",
				body:  policy(map[string]any{"label_selector": keyed(strings.Repeat("k", 64))}),
				field: `label_selector["` + strings.Repeat("k", 64) + `"]`, message: "the key is not a label key: its name must be at most 63 characters long"},
			{name: "a provider's metadata once flattened", method: "POST", path: "/api/v1/providers",
				body: func() any {
					reg := p.Registration("limits-sp", "vm")
					return map[string]any{"name": reg.Name, "endpoint": reg.Endpoint, "service_types": reg.ServiceTypes,
						"metadata": map[string]any{"resources": labelsOf(65)}}
				}(),
				field: "metadata", message: "must have at most 64 labels, not 65"},
			{name: "a filter too long", method: "GET", path: "/api/v1/catalog-item-instances?service_type=" + strings.Repeat("s", 257),
				field: "service_type", message: "must be at most 256 characters long"},
			{name: "too many label filters", method: "GET", path: "/api/v1/catalog-item-instances?" + strings.Repeat("label=a:b&", 65),
				field: "label", message: "must have at most 64 items"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := s.Do(t, tc.method, tc.path, tc.body)
				pr := r.WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
				if len(pr.Fields) != 1 || pr.Fields[0]["field"] != tc.field || pr.Fields[0]["message"] != tc.message {
					t.Fatalf("fields %v, want %s: %s", pr.Fields, tc.field, tc.message)
				}
				if want := tc.field + ": " + tc.message; !strings.Contains(pr.Detail, want) {
					t.Errorf("detail %q does not say %q", pr.Detail, want)
				}
				if len(r.Body) > 2000 {
					t.Errorf("the problem has %d bytes: it echoes what it refused", len(r.Body))
				}
			})
		}

		// What was refused was not stored; what is within the bounds is.
		var list struct {
			Results []struct {
				ID     string            `json:"id"`
				Labels map[string]string `json:"labels"`
			} `json:"results"`
		}
		s.Do(t, "GET", "/api/v1/catalog-item-instances", nil).Want(t, http.StatusOK).JSON(t, &list)
		if len(list.Results) != 1 || list.Results[0].ID != "labelled" || len(list.Results[0].Labels) != 60 {
			t.Fatalf("orders after the refusals: %+v", list.Results)
		}
		s.Do(t, "PATCH", "/api/v1/catalog-item-instances/labelled",
			map[string]any{"labels": labelsOf(64), "display_name": strings.Repeat("x", 256)}).Want(t, http.StatusOK)
		long := policy(map[string]any{"rego_code": "package limits\n\nmain := {}\n" + strings.Repeat("#", 200<<10),
			"label_selector": map[string]string{"app.kubernetes.io/name": strings.Repeat("v", 63)}})
		s.Do(t, "POST", "/api/v1/policies", long).Want(t, http.StatusCreated)
	})
}
