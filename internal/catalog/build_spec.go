package catalog

import (
	"fmt"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/schema"
)

// UserValue is a value an order sets at an editable field of its catalog
// item (API.md, catalog-item-instances: user_values).
type UserValue struct {
	// Path names the field, as in [Field.Path]. It is compared in its
	// canonical form: `labels["team"]` and labels.team are the same.
	Path string `json:"path"`
	// Value is any JSON value.
	Value any `json:"value"`
}

// BuildSpec returns the spec an order of item with values asks for (DCM's
// resolution, for one resource): a copy of the item's defaults, each
// field's default set at its path, then each user value set at its path in
// order, then service_type. It checks that
//
//   - each value's path is an editable field of the item, named once
//     ("user_values[1].path": "is not an editable field of catalog item X");
//   - each value satisfies its field's validation_schema
//     ("user_values[1].value": "must be at most 4");
//   - the whole spec satisfies the service type's schema. A failure at or
//     under a user value's path names the value ("user_values[1].value"),
//     any other the spec ("spec.guest_os": "is required").
//
// Failures are an [*invalid.Error]; any other error means the stored item
// or its service type is broken. It does no I/O, does not change item or
// values, and is safe for concurrent use. Validation schemas are compiled
// on each call (about 15µs each for a small one), so none is cached.
func (s *Service) BuildSpec(item Item, values []UserValue) (map[string]any, error) {
	return buildSpec(s.cfg.ServiceTypes, item, values)
}

func buildSpec(types *ServiceTypes, item Item, values []UserValue) (map[string]any, error) {
	paths := make([]schema.Path, len(item.Fields))
	fieldAt := make(map[string]int, len(item.Fields))
	for i, f := range item.Fields {
		p, err := schema.ParsePath(f.Path)
		if err != nil {
			return nil, fmt.Errorf("catalog item %s: fields[%d].path: %v", item.ID, i, err)
		}
		paths[i] = p
		fieldAt[p.String()] = i
	}
	spec, err := resolveDefaults(item, paths)
	if err != nil {
		return nil, fmt.Errorf("catalog item %s: %w", item.ID, err)
	}
	var errs invalid.Errors
	set := make([]schema.Path, len(values)) // where each good value went
	seen := make(map[string]int, len(values))
	for i, uv := range values {
		name := fmt.Sprintf("user_values[%d]", i)
		p, err := schema.ParsePath(uv.Path)
		if err != nil {
			errs.Add(name+".path", "%v", err)
			continue
		}
		j, ok := fieldAt[p.String()]
		if !ok || !item.Fields[j].Editable {
			errs.Add(name+".path", "is not an editable field of catalog item %s", item.ID)
			continue
		}
		if k, dup := seen[p.String()]; dup {
			errs.Add(name+".path", "duplicates user_values[%d].path", k)
			continue
		}
		seen[p.String()] = i
		v, err := normalizeJSON(uv.Value)
		if err != nil {
			errs.Add(name+".value", "must be a JSON value")
			continue
		}
		if raw := item.Fields[j].ValidationSchema; raw != nil {
			cs, err := schema.Compile(raw)
			if err != nil {
				return nil, fmt.Errorf("catalog item %s: fields[%d].validation_schema: %w", item.ID, j, err)
			}
			if err := addInvalid(&errs, cs.Validate(name+".value", v)); err != nil {
				return nil, err
			}
		}
		if err := p.Set(spec, v); err != nil {
			errs.Add(name+".path", "%v", err)
			continue
		}
		set[i] = p
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	spec["service_type"] = item.ServiceType
	if err := types.ValidateSpec(item.ServiceType, spec); err != nil {
		return nil, renameFields(err, func(field string) string {
			// The last value to write a location is the one to fix.
			for i := len(set) - 1; i >= 0; i-- {
				if rest, ok := schema.UnderPath(field, set[i].Under("spec")); ok {
					return fmt.Sprintf("user_values[%d].value%s", i, rest)
				}
			}
			return field
		})
	}
	return spec, nil
}
