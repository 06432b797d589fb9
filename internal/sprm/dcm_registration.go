package sprm

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/pkg/provider"
)

// registrationBody is POST /api/v1/providers as it arrives: Steward's
// registration, or DCM's, whose service-provider registration names one
// `service_type` and may nest objects in `metadata`
// (`resources{total_cpu, …}`).
type registrationBody struct {
	provider.Registration
	// Metadata shadows the registration's string map: a value may be an
	// object of scalars (DCM).
	Metadata map[string]any `json:"metadata,omitempty"`
	// ServiceType is DCM's single service type.
	ServiceType string `json:"service_type,omitempty"`
}

// registration maps the body onto Steward's registration: a lone
// service_type becomes service_types, and metadata objects are flattened to
// dotted string labels (resources.total_cpu: "64"), which placement policies
// match like any other label.
func (b registrationBody) registration() (provider.Registration, error) {
	reg := b.Registration
	var errs invalid.Errors
	switch {
	case len(reg.ServiceTypes) == 0 && b.ServiceType != "":
		reg.ServiceTypes = []string{b.ServiceType}
	case len(reg.ServiceTypes) == 0:
		errs.Add("service_types", "is required (or DCM's service_type)")
	case b.ServiceType != "" && !slices.Contains(reg.ServiceTypes, b.ServiceType):
		errs.Add("service_type", "is %q, which service_types does not list", b.ServiceType)
	}
	if len(b.Metadata) > 0 {
		reg.Metadata = map[string]string{}
		keys := make([]string, 0, len(b.Metadata))
		for k := range b.Metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			flattenLabel(reg.Metadata, &errs, k, b.Metadata[k])
		}
	}
	return reg, errs.Err()
}

// flattenLabel adds the label key=v: a scalar as its text, an object's
// members as key.member, recursively. Lists and nulls have no label form.
func flattenLabel(out map[string]string, errs *invalid.Errors, key string, v any) {
	switch v := v.(type) {
	case string:
		out[key] = v
	case bool:
		out[key] = strconv.FormatBool(v)
	case float64:
		out[key] = strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		out[key] = v.String()
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			flattenLabel(out, errs, key+"."+k, v[k])
		}
	default:
		errs.Add("metadata."+key, "must be a string, number, boolean or an object of them, not %s", jsonKind(v))
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}
