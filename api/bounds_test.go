package api_test

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/stewardhq/steward/api"
	"github.com/stewardhq/steward/internal/limits"
)

// unboundedValues are the request members that may hold any JSON value,
// which a schema of OpenAPI 3.0 cannot bound but by the body's size: each
// is bounded where the server takes it, as its description says.
var unboundedValues = []string{
	// An order's values and edits build its spec: at most
	// limits.MaxSpecBytes of JSON (internal/lifecycle).
	"PATCH /api/v1/catalog-item-instances/{catalog_item_instance_id} edits[].value",
	"PATCH /api/v1/catalog-item-instances/{catalog_item_instance_id} user_values[].value",
	"POST /api/v1/catalog-item-instances user_values[].value",
	// A field's default is checked against the service type's schema.
	"PATCH /api/v1/catalog-items/{catalog_item_id} fields[].default",
	"POST /api/v1/catalog-items fields[].default",
	// DCM's metadata values are flattened to labels, held to their rules
	// (internal/sprm).
	"POST /api/v1/providers metadata.*",
}

// boundedBy are the bounds the document must give the members of these
// names, wherever a request carries them: the ones internal/limits holds
// the domains to.
var boundedBy = map[string]struct {
	maxLength, maxProperties int
}{
	"display_name":     {maxLength: limits.MaxDisplayName},
	"labels":           {maxProperties: limits.MaxLabels},
	"labels.*":         {maxLength: limits.MaxLabelValue},
	"label_selector":   {maxProperties: limits.MaxLabels},
	"label_selector.*": {maxLength: limits.MaxLabelValue},
	"rego_code":        {maxLength: limits.MaxRegoCode},
	"message":          {maxLength: limits.MaxMessage},
	"description":      {maxLength: limits.MaxDescription},
	"reason":           {maxLength: limits.MaxDescription},
}

// boundedMetadata are the provider bodies whose metadata are labels.
var boundedMetadata = []string{"POST /api/v1/providers", "PATCH /api/v1/providers/{provider_id}"}

// TestRequests_EveryValueIsBounded holds every request to bounds (issue 45,
// finding 8): in each body of a POST, PUT or PATCH and each query and
// header parameter, every string has a maxLength (or an enum), every array
// a maxItems, every object that takes members it does not list a
// maxProperties, and a value of any type is allowed only where the server
// bounds it (unboundedValues). The members boundedBy names have the bounds
// the domains check. The validator refuses what passes a bound, so these
// are what the server enforces.
func TestRequests_EveryValueIsBounded(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPIYAML)
	if err != nil {
		t.Fatalf("load api/openapi.yaml: %v", err)
	}
	var anyValues []string
	checked := 0
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			route := method + " " + path
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if p.Value.In == "query" || p.Value.In == "header" {
					w := &boundsWalk{t: t, route: route, where: p.Value.In + " parameter "}
					w.walk(p.Value.Name, p.Value.Schema)
					anyValues = append(anyValues, w.any...)
					checked += w.n
				}
			}
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			for _, mt := range op.RequestBody.Value.Content {
				w := &boundsWalk{t: t, route: route, metadataAreLabels: slices.Contains(boundedMetadata, route)}
				w.walk("", mt.Schema)
				anyValues = append(anyValues, w.any...)
				checked += w.n
			}
		}
	}
	if checked < 300 {
		t.Fatalf("checked %d values; the document has more", checked)
	}
	slices.Sort(anyValues)
	anyValues = slices.Compact(anyValues)
	want := slices.Sorted(slices.Values(unboundedValues))
	if !slices.Equal(anyValues, want) {
		t.Errorf("members of any type = %q,\nwant exactly %q", anyValues, want)
	}
}

type boundsWalk struct {
	t                 *testing.T
	route, where      string
	metadataAreLabels bool
	any               []string
	n                 int
	// on are the schemas on the way down, to stop at a recursive one.
	on []*openapi3.Schema
}

func (w *boundsWalk) errorf(path, format string, args ...any) {
	w.t.Helper()
	w.t.Errorf("%s: %s%s: %s", w.route, w.where, cmp.Or(path, "body"), fmt.Sprintf(format, args...))
}

func (w *boundsWalk) walk(path string, ref *openapi3.SchemaRef) {
	w.t.Helper()
	if ref == nil || ref.Value == nil {
		return
	}
	s := ref.Value
	if slices.Contains(w.on, s) {
		return
	}
	w.on = append(w.on, s)
	defer func() { w.on = w.on[:len(w.on)-1] }()
	w.n++
	for _, sub := range slices.Concat(s.AllOf, s.AnyOf, s.OneOf) {
		w.walk(path, sub)
	}
	if b, ok := boundedBy[w.boundName(path)]; ok {
		if b.maxLength != 0 && s.Type.Is(openapi3.TypeString) && (s.MaxLength == nil || *s.MaxLength != uint64(b.maxLength)) {
			w.errorf(path, "maxLength must be %d, as internal/limits says", b.maxLength)
		}
		if b.maxProperties != 0 && s.Type.Is(openapi3.TypeObject) && (s.MaxProps == nil || *s.MaxProps != uint64(b.maxProperties)) {
			w.errorf(path, "maxProperties must be %d, as internal/limits says", b.maxProperties)
		}
	}
	switch {
	case s.Type.Is(openapi3.TypeString):
		if s.MaxLength == nil && len(s.Enum) == 0 {
			w.errorf(path, "a string needs a maxLength (or an enum)")
		}
	case s.Type.Is(openapi3.TypeArray):
		if s.MaxItems == nil {
			w.errorf(path, "an array needs a maxItems")
		}
		w.walk(path+"[]", s.Items)
	case s.Type.Is(openapi3.TypeObject) || len(s.Properties) > 0:
		for _, p := range slices.Sorted(maps.Keys(s.Properties)) {
			w.walk(strings.TrimPrefix(path+"."+p, "."), s.Properties[p])
		}
		closed := s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has
		if !closed && s.MaxProps == nil {
			w.errorf(path, "an object that takes members it does not list needs a maxProperties")
		}
		w.walk(strings.TrimPrefix(path+".*", "."), s.AdditionalProperties.Schema)
	case s.Type == nil || len(*s.Type) == 0:
		if len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) == 0 {
			w.any = append(w.any, w.route+" "+path)
		}
	}
}

// boundName is the name boundedBy knows path's member by: its last
// member's (`labels`), or the one of the map it is a value of
// (`labels.*`), a provider's metadata being labels.
func (w *boundsWalk) boundName(path string) string {
	segs := strings.Split(path, ".")
	name := strings.TrimSuffix(segs[len(segs)-1], "[]")
	if name == "*" && len(segs) > 1 {
		name = strings.TrimSuffix(segs[len(segs)-2], "[]") + ".*"
	}
	if w.metadataAreLabels && (name == "metadata" || name == "metadata.*") {
		name = strings.Replace(name, "metadata", "labels", 1)
	}
	return name
}
