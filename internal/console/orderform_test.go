package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// Issue 25: a field whose schema is an object with properties is a group
// of controls, one per property (nested objects nested again), prefilled
// from the item's default; what is submitted is the object, the default's
// other members kept; a property that cannot be read or that the schema
// refuses shows on its control; the update form shows the order's object
// and sends it only when a property changed. Issue 46, item 11: an array
// of integers is a list editor whose elements are sent as integers, an
// element that is not one named by its path; the update form shows the
// order's elements and sends the list when one changed.
func TestConsole_ObjectFieldsAreFormsOfTheirProperties(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite)
	p := providertest.New(t, func(c *providertest.Config) { c.Update = true })
	s.Do(t, "POST", "/api/v1/providers", p.Registration("app-sp", "app")).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/service-types?id=app", map[string]any{"schema": map[string]any{
		"type": "object",
		"properties": map[string]any{"resources": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"replicas": map[string]any{"type": "integer", "minimum": 0, "maximum": 50, "x-modifier": "rw+"},
				"tier":     map[string]any{"type": "string", "enum": []string{"small", "large"}},
				"limits": map[string]any{"type": "object", "properties": map[string]any{
					"cpu": map[string]any{"type": "string", "title": "CPU limit"}}},
			},
		},
			"ports": map[string]any{"type": "array", "items": map[string]any{"type": "integer", "minimum": 1}, "x-modifier": "rw+"}},
	}}).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-items?id=app", map[string]any{"service_type": "app",
		"defaults": map[string]any{"resources": map[string]any{"replicas": 2, "tier": "small", "note": "kept"}, "ports": []int{80}},
		"fields": []map[string]any{{"path": "resources", "display_name": "Resources", "editable": true},
			{"path": "ports", "display_name": "Ports", "editable": true}},
	}).Want(t, http.StatusCreated)
	b := newBrowser(t, s.URL())

	form := b.get("/ui/catalog/app/order")
	for _, want := range []string{`<legend>Resources <span class="id">resources</span></legend>`,
		`<legend>limits <span class="id">resources.limits</span></legend>`, `<label for="f0_0_0">CPU limit`,
		`<input type="number" id="f0_1" name="f0_1" value="2" step="1" min="0" max="50">`,
		`<select id="f0_2" name="f0_2">`, `<option selected>small</option>`, `<legend>Ports <span class="id">ports</span></legend>`,
		`<input type="number" id="f1-0" name="f1" value="80" step="1" min="1" aria-label="Ports, item 1">`,
		`<input type="number" id="f1-2" name="f1" value="" step="1" min="1" aria-label="Ports, item 3">`} {
		if !strings.Contains(form.body, want) {
			t.Errorf("the order form has no %s", want)
		}
	}
	if strings.Contains(form.body, `<textarea id="f0"`) {
		t.Error("the object field is a JSON text area")
	}

	for name, tc := range map[string]struct {
		values url.Values
		shows  string
	}{
		"not an integer":        {url.Values{"f0_1": {"two"}}, `<p class="error" id="f0_1-error">not a valid integer</p>`},
		"refused by schema":     {url.Values{"f0_1": {"99"}, "f0_2": {"small"}}, `<p class="error" id="f0_1-error">must be at most 50.</p>`},
		"an element not an int": {url.Values{"f1": {"80", "", "http"}}, `<p class="error" id="f1-1-error">ports[1]: not a valid integer.</p>`},
		"an element refused":    {url.Values{"f1": {"0"}}, `<p class="error" id="f1-0-error">ports[0]: must be at least 1.</p>`},
	} {
		tc.values.Set("csrf", b.csrf())
		tc.values.Set("order_id", "refused")
		if p := b.post("/ui/catalog/app/order", tc.values); p.status != http.StatusBadRequest || !strings.Contains(p.body, tc.shows) {
			t.Errorf("%s: %d, want 400 showing %q", name, p.status, tc.shows)
		}
	}

	made := b.post("/ui/catalog/app/order", url.Values{"csrf": {b.csrf()}, "order_id": {"app1"},
		"f0_0_0": {"500m"}, "f0_1": {"3"}, "f0_2": {"large"}, "f1": {"80", "443", ""}})
	if made.status != http.StatusSeeOther {
		t.Fatalf("order from the form: %d %s", made.status, made.body)
	}
	requestedAt := func(name string) string {
		var o struct {
			Attributes struct {
				Requested map[string]any `json:"requested"`
			} `json:"attributes"`
		}
		s.Do(t, "GET", "/api/v1/catalog-item-instances/app1", nil).Want(t, http.StatusOK).JSON(t, &o)
		out, _ := json.Marshal(o.Attributes.Requested[name])
		return string(out)
	}
	requested := func() string { return requestedAt("resources") }
	const want = `{"limits":{"cpu":"500m"},"note":"kept","replicas":3,"tier":"large"}`
	if got := requested(); got != want {
		t.Fatalf("resources ordered: %s, want %s", got, want)
	}
	if got := requestedAt("ports"); got != "[80,443]" {
		t.Errorf("ports ordered: %s, want [80,443]", got)
	}

	o := placed(t, s, p, "app1")
	s.Do(t, "PUT", "/api/v1/service-type-instances/"+o.InstanceID+"/status", map[string]any{"status": "RUNNING",
		"observed_time": time.Now().UTC().Format(time.RFC3339Nano)}).Want(t, http.StatusOK)
	waitState(t, s, "app1", "up")

	update := b.get("/ui/orders/app1/update")
	if !strings.Contains(update.body, `id="f0_1" name="f0_1" value="3"`) || !strings.Contains(update.body, `id="f0_0_0" name="f0_0_0" value="500m"`) ||
		!strings.Contains(update.body, `id="f1-1" name="f1" value="443"`) {
		t.Errorf("the update form does not show the order's resources and ports")
	}
	same := url.Values{"csrf": {b.csrf()}, "f0_0_0": {"500m"}, "f0_1": {"3"}, "f0_2": {"large"}, "f1": {"80", "443", "", ""}}
	if p := b.post("/ui/orders/app1/update", same); !strings.Contains(p.header.Get("Location"), "Nothing+changed") {
		t.Errorf("an update changing no property: %d to %q", p.status, p.header.Get("Location"))
	}
	same.Set("f0_1", "4")
	same["f1"] = []string{"", "8080", ""} // 80 removed, 443 changed
	if p := b.post("/ui/orders/app1/update", same); !strings.Contains(p.header.Get("Location"), "Update+requested") {
		i := strings.Index(p.body, `class="error"`)
		t.Fatalf("an update of replicas: %d to %q: %s", p.status, p.header.Get("Location"), p.body[max(i, 0):min(len(p.body), max(i, 0)+600)])
	}
	if got := requested(); got != `{"limits":{"cpu":"500m"},"note":"kept","replicas":4,"tier":"large"}` {
		t.Errorf("resources after the update: %s", got)
	}
	if got := requestedAt("ports"); got != "[8080]" {
		t.Errorf("ports after the update: %s, want [8080]", got)
	}
}
