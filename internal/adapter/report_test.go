package adapter

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/stewardhq/steward/api"
)

// A condition's reason and message are cut to what Steward takes, which
// is what api/openapi.yaml says (issue 45, finding 8): a report refused
// for a long error text would be lost.
func TestPutReport_CutsConditionsToTheDocumentsBounds(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	props := doc.Components.Schemas["AdapterCondition"].Value.Properties
	for name, want := range map[string]int{"reason": maxConditionReason, "message": maxConditionMessage} {
		if got := props[name].Value.MaxLength; got == nil || *got != uint64(want) {
			t.Errorf("AdapterCondition.%s maxLength = %v, the adapter cuts at %d", name, got, want)
		}
	}

	in := Report{Conditions: []Condition{{Type: ConditionApplied, Status: StatusFalse,
		Reason: strings.Repeat("R", 3000), Message: strings.Repeat("é", 5000)}}}
	out := cutReport(in)
	c := out.Conditions[0]
	if utf8.RuneCountInString(c.Reason) != maxConditionReason || utf8.RuneCountInString(c.Message) != maxConditionMessage ||
		!strings.HasSuffix(c.Message, "é…") {
		t.Errorf("cut to %d and %d characters", utf8.RuneCountInString(c.Reason), utf8.RuneCountInString(c.Message))
	}
	if len(in.Conditions[0].Message) != 10000 {
		t.Error("cutReport changed the report it was given")
	}
	if short := cutReport(Report{Conditions: []Condition{{Message: "ok"}}}); short.Conditions[0].Message != "ok" {
		t.Errorf("a short message became %q", short.Conditions[0].Message)
	}
}
