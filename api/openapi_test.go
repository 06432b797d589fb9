package api_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/stewardhq/steward/api"
)

// methodRef is a method named in prose the way info.description names one:
// `POST /api/v1/service-type-instances`.
var methodRef = regexp.MustCompile("`(GET|PUT|POST|PATCH|DELETE) (/api/[^` ]+)`")

// TestInfoDescription_Names202Methods keeps info.description's list of the
// methods that answer 202 complete (each answers it with an Operation or with
// the resource it acts on, and a client must know which): every operation
// with a 202 response is named there as `METHOD /path`, and every method
// named there exists. Spectral's core functions cannot compare two parts of
// the document, so this is a test rather than a rule in api/.spectral.yaml.
func TestInfoDescription_Names202Methods(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPIYAML)
	if err != nil {
		t.Fatalf("load api/openapi.yaml: %v", err)
	}
	// Markdown may wrap a line anywhere; compare with whitespace collapsed.
	desc := strings.Join(strings.Fields(doc.Info.Description), " ")

	named := map[string]bool{}
	for _, m := range methodRef.FindAllStringSubmatch(desc, -1) {
		named[m[1]+" "+m[2]] = true
	}
	var async []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Responses.Value("202") != nil {
				async = append(async, method+" "+path)
			}
		}
	}
	slices.Sort(async)
	if len(async) == 0 {
		t.Fatal("no operation answers 202; the test reads the document wrongly")
	}
	for _, m := range async {
		if !named[m] {
			t.Errorf("%s answers 202 but info.description does not name it (as `%s`) with what it answers", m, m)
		}
	}
	for m := range named {
		method, path, _ := strings.Cut(m, " ")
		item := doc.Paths.Find(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Errorf("info.description names `%s`, which the document does not have", m)
		}
	}
}
