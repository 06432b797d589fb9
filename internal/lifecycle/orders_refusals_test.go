package lifecycle_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 46, item 14: a refused order value is named as the catalog item
// and its service type name it (path, display_name), said in words (no
// regular expression in the message), and still found in the request
// (field: user_values[N].value), on create and on PATCH.
func TestOrders_RefusedValuesAreNamedAsTheItemNamesThem(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		longPattern := "^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$"
		e.s.Do(t, "POST", "/api/v1/catalog-items?id=named-vm", map[string]any{
			"service_type": "vm",
			"defaults":     map[string]any{"memory": map[string]any{"size": "2GB"}},
			"fields": []any{
				map[string]any{"path": "vcpu.count", "display_name": "vCPUs", "editable": true, "default": 2,
					"validation_schema": map[string]any{"minimum": 2}},
				map[string]any{"path": "guest_os.type", "display_name": "Operating system", "editable": true,
					"default": "fedora-39", "validation_schema": map[string]any{"enum": []any{"fedora-39", "rhel-9"}}},
				map[string]any{"path": "metadata.labels.team", "display_name": "Team", "editable": true,
					"validation_schema": map[string]any{"type": "string", "description": "Your team's short name, in lowercase.",
						"pattern": longPattern}},
				map[string]any{"path": "metadata.name", "display_name": "Name", "editable": true},
			},
		}).Want(t, http.StatusCreated)

		// Create: a bad value for the enum, the minimum and the pattern.
		p := e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=named", map[string]any{
			"catalog_item_id": "named-vm",
			"user_values": []any{
				map[string]any{"path": "guest_os.type", "value": "windows"},
				map[string]any{"path": "vcpu.count", "value": 1},
				map[string]any{"path": "metadata.labels.team", "value": "Platform Team"},
			},
		}).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		want := []map[string]any{
			{"field": "user_values[0].value", "path": "guest_os.type", "display_name": "Operating system",
				"message": `must be one of "fedora-39", "rhel-9"`},
			{"field": "user_values[1].value", "path": "vcpu.count", "display_name": "vCPUs", "message": "must be at least 2"},
			{"field": "user_values[2].value", "path": "metadata.labels.team", "display_name": "Team",
				"message": "does not have the form this field takes: Your team's short name, in lowercase.",
				"detail":  "pattern " + longPattern[:64] + "…"},
		}
		if diff := cmp.Diff(want, p.Fields); diff != "" {
			t.Errorf("create's refused fields: -want +got:\n%s", diff)
		}
		for _, name := range []string{"guest_os.type (Operating system): must be one of", "vcpu.count (vCPUs): must be at least 2",
			"metadata.labels.team (Team): does not have the form this field takes"} {
			if !strings.Contains(p.Detail, name) {
				t.Errorf("detail %q does not say %q", p.Detail, name)
			}
		}
		if strings.Contains(p.Detail, "(?:") {
			t.Errorf("detail %q quotes the pattern: it belongs in the field's detail", p.Detail)
		}

		// PATCH: the service type's own pattern, said in its description.
		e.upOf(t, "named", "named-vm")
		p = e.s.Do(t, "PATCH", "/api/v1/catalog-item-instances/named", map[string]any{"user_values": []any{
			map[string]any{"path": "vcpu.count", "value": 3},
			map[string]any{"path": "metadata.name", "value": "Not A Name"},
		}}).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		want = []map[string]any{{"field": "user_values[1].value", "path": "metadata.name", "display_name": "Name",
			"message": "does not have the form this field takes: Resource name, a DNS label.",
			"detail":  "pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"}}
		if diff := cmp.Diff(want, p.Fields); diff != "" {
			t.Errorf("PATCH's refused fields: -want +got:\n%s", diff)
		}
	})
}
