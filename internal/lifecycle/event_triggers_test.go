package lifecycle

import (
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	stewardapi "github.com/stewardhq/steward/api"
	"github.com/stewardhq/steward/internal/statemachine"
)

// Every trigger an order's event can carry is in the document's
// OrderEvent.trigger enum: force_delete was missing (issue 22, item 9).
func TestEventTriggers_AreDocumented(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(stewardapi.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, v := range doc.Components.Schemas["OrderEvent"].Value.Properties["trigger"].Value.Enum {
		documented = append(documented, v.(string))
	}
	emitted := []string{eventCreate, eventDelete, eventForceDelete}
	for _, tr := range statemachine.Triggers() {
		emitted = append(emitted, string(tr))
	}
	for _, tr := range emitted {
		if !slices.Contains(documented, tr) {
			t.Errorf("trigger %q is not in OrderEvent.trigger's enum %q", tr, documented)
		}
	}
}
