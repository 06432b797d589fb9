package catalog

import (
	"context"
	"fmt"
	"strings"

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
// Each failure also names the location as the item and the service type
// name it, in [invalid.Field.Path] ("vcpu.count", "env[0].name"), with the
// display name of the item's field there or above it, so a person is told
// "vcpu.count (vCPUs): must be at most 4" and a client can still find the
// value it sent.
//
// Failures are an [*invalid.Error]; any other error means the stored item
// or its service type is broken. It does no I/O, does not change item or
// values, and is safe for concurrent use. Validation schemas are compiled
// on each call (about 15µs each for a small one), so none is cached.
func (s *Service) BuildSpec(ctx context.Context, item Item, values []UserValue) (map[string]any, error) {
	return buildSpec(ctx, s.cfg.ServiceTypes, item, values)
}

func buildSpec(ctx context.Context, types *ServiceTypes, item Item, values []UserValue) (map[string]any, error) {
	paths, fieldAt, err := fieldIndex(item)
	if err != nil {
		return nil, err
	}
	spec, err := resolveDefaults(item, paths)
	if err != nil {
		return nil, fmt.Errorf("catalog item %s: %w", item.ID, err)
	}
	return applyValues(ctx, types, item, fieldAt, spec, values)
}

// ApplyUserValues returns base with values set at their editable fields of
// item, checked as [Service.BuildSpec] checks them, and the result checked
// against the service type's schema: an update of an order's attributes
// keeps what it was built with and changes what the values name. base is
// not changed.
func (s *Service) ApplyUserValues(ctx context.Context, item Item, base map[string]any, values []UserValue) (map[string]any, error) {
	_, fieldAt, err := fieldIndex(item)
	if err != nil {
		return nil, err
	}
	spec, _ := schema.DeepCopy(base).(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	return applyValues(ctx, s.cfg.ServiceTypes, item, fieldAt, spec, values)
}

// fieldIndex parses an item's field paths and indexes them by canonical
// path.
func fieldIndex(item Item) ([]schema.Path, map[string]int, error) {
	paths := make([]schema.Path, len(item.Fields))
	fieldAt := make(map[string]int, len(item.Fields))
	for i, f := range item.Fields {
		p, err := schema.ParsePath(f.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("catalog item %s: fields[%d].path: %v", item.ID, i, err)
		}
		paths[i] = p
		fieldAt[p.String()] = i
	}
	return paths, fieldAt, nil
}

// applyValues sets values in spec (see setUserValues), then service_type,
// and checks the whole against the type's schema, naming a failure at or
// under a value's path after the value.
func applyValues(ctx context.Context, types *ServiceTypes, item Item, fieldAt map[string]int, spec map[string]any,
	values []UserValue) (map[string]any, error) {
	set, err := setUserValues(item, fieldAt, spec, values)
	if err != nil {
		return nil, err
	}
	spec["service_type"] = item.ServiceType
	if err := types.ValidateSpec(ctx, item.ServiceType, spec); err != nil {
		return nil, mapFields(err, func(f invalid.Field) invalid.Field {
			// The last value to write a location is the one to fix.
			for i := len(set) - 1; i >= 0; i-- {
				if rest, ok := schema.UnderPath(f.Field, set[i].Under("spec")); ok {
					f.Field = fmt.Sprintf("user_values[%d].value%s", i, rest)
					f.Path = set[i].String() + rest
					f.DisplayName = displayNameAt(item, fieldAt, f.Path)
					return f
				}
			}
			if rest, ok := schema.UnderPath(f.Field, "spec"); ok && rest != "" {
				f.Path = strings.TrimPrefix(rest, ".")
				f.DisplayName = displayNameAt(item, fieldAt, f.Path)
			}
			return f
		})
	}
	return spec, nil
}

// DisplayNameAt returns the display name of the item's field at path (a
// location in the spec, in the syntax of [schema.Path.String]), or of the
// nearest field above it: how the item names what a refusal is about. It
// is "" when there is none, or it has no display name.
func (it Item) DisplayNameAt(path string) string {
	_, fieldAt, err := fieldIndex(it)
	if err != nil {
		return ""
	}
	return displayNameAt(it, fieldAt, path)
}

// displayNameAt returns the display name of the item's field at the
// location path (an error field's syntax, relative to the spec), or of the
// nearest field above it; "" when there is none or it has none.
func displayNameAt(item Item, fieldAt map[string]int, path string) string {
	best, name := -1, ""
	for canonical, i := range fieldAt {
		if _, ok := schema.UnderPath(path, canonical); ok && len(canonical) > best {
			best, name = len(canonical), item.Fields[i].DisplayName
		}
	}
	return name
}

// setUserValues sets each value at its editable field of item in spec,
// checking it against the field's validation schema, and returns where
// each went. fieldAt indexes the item's fields by canonical path.
func setUserValues(item Item, fieldAt map[string]int, spec map[string]any,
	values []UserValue) ([]schema.Path, error) {
	var errs invalid.Errors
	set := make([]schema.Path, len(values)) // where each good value went
	seen := make(map[string]int, len(values))
	for i, uv := range values {
		name := fmt.Sprintf("user_values[%d]", i)
		p, err := schema.ParsePath(uv.Path)
		if err != nil {
			errs.AddField(invalid.Field{Field: name + ".path", Message: err.Error(), Path: uv.Path})
			continue
		}
		// refuse names the value's field as the item does.
		at := p.String()
		j, ok := fieldAt[at]
		refuse := func(field, msg string) {
			f := invalid.Field{Field: name + field, Message: msg, Path: at}
			if ok {
				f.DisplayName = item.Fields[j].DisplayName
			}
			errs.AddField(f)
		}
		if !ok || !item.Fields[j].Editable {
			refuse(".path", "is not an editable field of catalog item "+item.ID)
			continue
		}
		if k, dup := seen[at]; dup {
			refuse(".path", fmt.Sprintf("duplicates user_values[%d].path", k))
			continue
		}
		seen[at] = i
		v, err := normalizeJSON(uv.Value)
		if err != nil {
			refuse(".value", "must be a JSON value")
			continue
		}
		if raw := item.Fields[j].ValidationSchema; raw != nil {
			cs, err := schema.Compile(raw)
			if err != nil {
				return nil, fmt.Errorf("catalog item %s: fields[%d].validation_schema: %w", item.ID, j, err)
			}
			err = mapFields(cs.Validate(name+".value", v), func(f invalid.Field) invalid.Field {
				rest, _ := schema.UnderPath(f.Field, name+".value")
				f.Path, f.DisplayName = at+rest, item.Fields[j].DisplayName
				return f
			})
			if err := addInvalid(&errs, err); err != nil {
				return nil, err
			}
		}
		if err := p.Set(spec, v); err != nil {
			refuse(".path", err.Error())
			continue
		}
		set[i] = p
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return set, errs.Err()
}
