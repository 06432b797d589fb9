package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/schema"
)

// Limits on a catalog item, so one item stays a reviewable document.
const (
	maxDisplayName = 256
	maxFields      = 256
)

// Item is a catalog item (API.md; DCM's catalog-item-schema): a service
// type with default values and the fields an order may or must set. The
// spec an order starts from is the item's Defaults with each field's
// Default set at its path, plus service_type; see [Service.BuildSpec].
type Item struct {
	ID string `json:"id"`
	// DisplayName is shown to users. Defaults to the id.
	DisplayName string `json:"display_name"`
	// ServiceType is the id of the service type the item orders. It cannot
	// change once the item exists.
	ServiceType string `json:"service_type"`
	// Defaults is a spec fragment: part of a spec of the service type,
	// which may leave required properties to the fields. Marshalled as {}
	// when empty.
	Defaults map[string]any `json:"defaults"`
	// Fields configures locations of the spec. Marshalled as [] when empty.
	Fields     []Field   `json:"fields"`
	Version    int64     `json:"-"`
	CreateTime time.Time `json:"create_time"`
	UpdateTime time.Time `json:"update_time"`
}

// Field configures one location of a catalog item's spec (DCM's field
// config).
type Field struct {
	// Path is the location, relative to the spec: property names after
	// dots, array indexes in brackets ("vcpu.count", "process.env[0].value"),
	// a property name that is not an identifier quoted in brackets
	// (`metadata.labels["app.kubernetes.io/name"]`). An index may name the
	// item just past the end of its array, which appends it. Paths are
	// unique within an item, and none starts at service_type.
	Path        string `json:"path"`
	DisplayName string `json:"display_name,omitempty"`
	// Editable says whether an order may set the value. Defaults to false.
	Editable bool `json:"editable"`
	// Default, when not nil, is set at Path before an order's values. JSON
	// null means no default.
	Default any `json:"default,omitempty"`
	// ValidationSchema, only on an editable field, is a JSON Schema
	// 2020-12 document (an object) that a value set at Path must satisfy,
	// the Default included, on top of the service type's schema.
	ValidationSchema json.RawMessage `json:"validation_schema,omitempty"`
}

// checkItem reports whether it is a catalog item Steward accepts, as an
// [*invalid.Error] naming each bad field ("fields[1].path"):
//
//   - service_type names a known service type; defaults.service_type, if
//     present, equals it;
//   - each field path parses, is unique and does not start at service_type;
//   - validation_schema is only on editable fields, and compiles;
//   - each value the item itself supplies at a field with a
//     validation_schema (the field's default, or else the value in
//     defaults) satisfies it;
//   - the resolved defaults (defaults ← field defaults, plus service_type)
//     satisfy the service type's schema, except that a missing property, or
//     too few items, is allowed: an order's values may supply them. A value
//     the item supplies is checked, even where an editable field lets an
//     order replace it, because an order that sets nothing keeps it.
//
// It does not check the id.
func checkItem(ctx context.Context, types *ServiceTypes, it Item) error {
	var errs invalid.Errors
	if utf8.RuneCountInString(it.DisplayName) > maxDisplayName {
		errs.Add("display_name", "must be at most %d characters long", maxDisplayName)
	}
	knownType := false
	switch _, err := types.Get(ctx, it.ServiceType); {
	case it.ServiceType == "":
		errs.Add("service_type", "is required")
	case errors.Is(err, ErrServiceTypeNotFound):
		errs.Add("service_type", "is not a known service type")
	case err != nil:
		return err
	default:
		knownType = true
	}
	if st, ok := it.Defaults["service_type"]; ok && st != it.ServiceType {
		errs.Add("defaults.service_type", "must be %q, the item's service_type, or absent", it.ServiceType)
	}
	if len(it.Fields) > maxFields {
		errs.Add("fields", "must have at most %d fields", maxFields)
		return errs.Err()
	}
	paths, schemas, err := checkFields(&errs, it.Fields)
	if err != nil {
		return err
	}
	if err := errs.Err(); err != nil || !knownType {
		return err
	}
	spec, err := resolveDefaults(it, paths)
	if err != nil {
		var pe *fieldPathError
		if errors.As(err, &pe) {
			return invalid.New(fmt.Sprintf("fields[%d].path", pe.field), "%v", pe.err)
		}
		return err
	}
	for i, f := range it.Fields {
		if schemas[i] == nil || f.Default != nil {
			continue // no schema, or the default was checked as fields[i].default
		}
		if v, ok := paths[i].Get(it.Defaults); ok {
			if err := addInvalid(&errs, schemas[i].Validate(paths[i].Under("defaults"), v)); err != nil {
				return err
			}
		}
	}
	err = types.validateFragment(ctx, it.ServiceType, "defaults", spec)
	err = renameFields(err, func(field string) string {
		// A bad value that a field's default put there is that default's
		// fault; the last field to write a location wins.
		for i := len(it.Fields) - 1; i >= 0; i-- {
			if it.Fields[i].Default == nil {
				continue
			}
			if rest, ok := schema.UnderPath(field, paths[i].Under("defaults")); ok {
				return fmt.Sprintf("fields[%d].default%s", i, rest)
			}
		}
		return field
	})
	if err := addInvalid(&errs, err); err != nil {
		return err
	}
	return errs.Err()
}

// checkFields checks each field on its own and returns the parsed paths and
// compiled validation schemas (nil where a field has none or is bad). The
// error is one that is not the client's.
func checkFields(errs *invalid.Errors, fields []Field) ([]schema.Path, []*schema.Schema, error) {
	paths := make([]schema.Path, len(fields))
	schemas := make([]*schema.Schema, len(fields))
	seen := make(map[string]int, len(fields))
	for i, f := range fields {
		name := fmt.Sprintf("fields[%d]", i)
		if utf8.RuneCountInString(f.DisplayName) > maxDisplayName {
			errs.Add(name+".display_name", "must be at most %d characters long", maxDisplayName)
		}
		p, err := schema.ParsePath(f.Path)
		switch {
		case err != nil:
			errs.Add(name+".path", "%v", err)
		case p.Head() == "service_type":
			errs.Add(name+".path", "cannot be under service_type: the item's service_type sets it")
		default:
			if j, dup := seen[p.String()]; dup {
				errs.Add(name+".path", "duplicates fields[%d].path", j)
			} else {
				seen[p.String()] = i
				paths[i] = p
			}
		}
		if f.ValidationSchema == nil {
			continue
		}
		if !f.Editable {
			errs.Add(name+".validation_schema", "is allowed only on an editable field")
			continue
		}
		cs, err := schema.Compile(f.ValidationSchema)
		err = renameFields(err, func(field string) string {
			rest, _ := schema.UnderPath(field, "schema")
			return name + ".validation_schema" + rest
		})
		if err := addInvalid(errs, err); err != nil {
			return nil, nil, err
		}
		schemas[i] = cs
		if cs != nil && f.Default != nil {
			if err := addInvalid(errs, cs.Validate(name+".default", f.Default)); err != nil {
				return nil, nil, err
			}
		}
	}
	return paths, schemas, nil
}

// fieldPathError is a field's default that cannot be set at its path.
type fieldPathError struct {
	field int
	err   error
}

func (e *fieldPathError) Error() string { return fmt.Sprintf("fields[%d].path: %v", e.field, e.err) }

func (e *fieldPathError) Unwrap() error { return e.err }

// resolveDefaults returns the spec an order of it starts from: a copy of
// its defaults with each field's default set at its path (paths[i], parsed)
// in order, and service_type set. A default that cannot be set is a
// *fieldPathError.
func resolveDefaults(it Item, paths []schema.Path) (map[string]any, error) {
	spec, _ := schema.DeepCopy(it.Defaults).(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	for i, f := range it.Fields {
		if f.Default == nil {
			continue
		}
		if err := paths[i].Set(spec, schema.DeepCopy(f.Default)); err != nil {
			return nil, &fieldPathError{field: i, err: err}
		}
	}
	spec["service_type"] = it.ServiceType
	return spec, nil
}

// normalizeItem gives it the shapes the store keeps: JSON values decoded as
// encoding/json decodes them, empty collections rather than nil, a null
// validation_schema as none, and the display name defaulted to the id.
func normalizeItem(it *Item) error {
	if it.DisplayName == "" {
		it.DisplayName = it.ID
	}
	defaults, err := normalizeJSON(it.Defaults)
	if err != nil {
		return invalid.New("defaults", "must be a JSON object: %v", err)
	}
	it.Defaults, _ = defaults.(map[string]any)
	if it.Defaults == nil {
		it.Defaults = map[string]any{}
	}
	// A copy: the caller's fields are not changed (the dev catalog's are
	// shared by every server in a process).
	it.Fields = append([]Field{}, it.Fields...)
	for i := range it.Fields {
		f := &it.Fields[i]
		if f.Default, err = normalizeJSON(f.Default); err != nil {
			return invalid.New(fmt.Sprintf("fields[%d].default", i), "must be a JSON value: %v", err)
		}
		if s := bytes.TrimSpace(f.ValidationSchema); len(s) == 0 || bytes.Equal(s, []byte("null")) {
			f.ValidationSchema = nil
		}
	}
	return nil
}

// normalizeJSON returns a copy of v as encoding/json decodes JSON (a value
// built in Go may hold, say, a map[string]string or an int).
func normalizeJSON(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// addInvalid adds the fields of an [*invalid.Error] to errs. It returns
// any other non-nil error, which is not the client's.
func addInvalid(errs *invalid.Errors, err error) error {
	var inv *invalid.Error
	if err == nil {
		return nil
	}
	if !errors.As(err, &inv) {
		return err
	}
	for _, f := range inv.Fields {
		errs.AddField(f)
	}
	return nil
}

// renameFields returns err with each field of an [*invalid.Error] renamed
// by rename; any other error is returned as it is.
func renameFields(err error, rename func(string) string) error {
	return mapFields(err, func(f invalid.Field) invalid.Field {
		f.Field = rename(f.Field)
		return f
	})
}

// mapFields returns err with each field of an [*invalid.Error] replaced by
// what fn makes of it; any other error is returned as it is, nil as nil.
func mapFields(err error, fn func(invalid.Field) invalid.Field) error {
	var inv *invalid.Error
	if !errors.As(err, &inv) {
		return err
	}
	out := &invalid.Error{Fields: make([]invalid.Field, len(inv.Fields))}
	for i, f := range inv.Fields {
		out.Fields[i] = fn(f)
	}
	return out
}
