package console

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// formField is one control of an order form, made from a catalog item's
// field and the JSON Schema that applies at its path (the service type's,
// with the field's validation_schema on top).
type formField struct {
	Name     string // the control's name: "f<index>"
	Path     string
	Label    string
	Help     string
	Kind     string // text, number, checkbox, select, json, object
	Value    string // as the control shows it
	Checked  bool
	Options  []string
	Min, Max string
	Step     string
	Pattern  string
	Editable bool
	Error    string
	// kind of JSON value the control's text becomes
	schemaType string
	// the field's default, set in the spec when no value is given
	defaultValue any
	// Sub are an object's controls, one per property its schema declares;
	// key is a sub-control's property name.
	Sub []formField
	key string
	// base is the object the form showed (the default, or the order's
	// value); what the sub-controls give is laid over it.
	base map[string]any
}

// catalogField is a catalog item's field as the API answers it.
type catalogField struct {
	Path             string         `json:"path"`
	DisplayName      string         `json:"display_name"`
	Editable         bool           `json:"editable"`
	Default          any            `json:"default"`
	ValidationSchema map[string]any `json:"validation_schema"`
}

// orderForm reads a catalog item and its service type and lays out the
// form that orders it.
func (c *Console) orderForm(r *http.Request, s *session, itemID string) (item map[string]any, fields []formField, err error) {
	item, _, fields, err = c.orderFormSpec(r, s, itemID)
	return item, fields, err
}

// orderFormSpec is orderForm, with the item's defaults.
func (c *Console) orderFormSpec(r *http.Request, s *session, itemID string) (item, defaults map[string]any, fields []formField, err error) {
	var ci struct {
		ID          string         `json:"id"`
		DisplayName string         `json:"display_name"`
		ServiceType string         `json:"service_type"`
		Defaults    map[string]any `json:"defaults"`
		Fields      []catalogField `json:"fields"`
	}
	if err := c.call(r, s, http.MethodGet, "/api/v1/catalog-items/"+url.PathEscape(itemID), nil, &ci); err != nil {
		return nil, nil, nil, err
	}
	var st struct {
		Schema map[string]any `json:"schema"`
	}
	if err := c.call(r, s, http.MethodGet, "/api/v1/service-types/"+url.PathEscape(ci.ServiceType), nil, &st); err != nil {
		return nil, nil, nil, err
	}
	for i, f := range ci.Fields {
		own := f.Default
		if f.Default == nil {
			f.Default = valueAt(ci.Defaults, f.Path)
		}
		schema := schemaAt(st.Schema, f.Path)
		for k, v := range f.ValidationSchema {
			schema[k] = v
		}
		ff := newFormField(fmt.Sprintf("f%d", i), f, schema)
		ff.defaultValue = own
		fields = append(fields, ff)
	}
	return map[string]any{"ID": ci.ID, "DisplayName": ci.DisplayName, "ServiceType": ci.ServiceType}, ci.Defaults, fields, nil
}

// segment matches one step of a field path: a name, then any [index]es.
var segment = regexp.MustCompile(`^([^.\[\]]+)((?:\[\d+\])*)$`)

// schemaAt returns a copy of the schema that applies at path in schema
// (properties by name, items by index); an empty one where it says none.
func schemaAt(schema map[string]any, path string) map[string]any {
	cur := schema
	for _, step := range strings.Split(path, ".") {
		m := segment.FindStringSubmatch(step)
		if m == nil || cur == nil {
			return map[string]any{}
		}
		props, _ := cur["properties"].(map[string]any)
		cur, _ = props[m[1]].(map[string]any)
		for range strings.Count(m[2], "[") {
			if cur == nil {
				break
			}
			cur, _ = cur["items"].(map[string]any)
		}
	}
	out := map[string]any{}
	for k, v := range cur {
		out[k] = v
	}
	return out
}

// valueAt returns the value at a dotted path of names in v (nil when
// none; a path with indexes is not looked into).
func valueAt(v map[string]any, path string) any {
	var cur any = v
	for _, name := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[name]
	}
	return cur
}

func newFormField(name string, f catalogField, schema map[string]any) formField {
	ff := formField{Name: name, Path: f.Path, Label: f.DisplayName, Editable: f.Editable}
	if ff.Label == "" {
		ff.Label = f.Path
	}
	ff.Help, _ = schema["description"].(string)
	ff.schemaType, _ = schema["type"].(string)
	switch enum, _ := schema["enum"].([]any); {
	case len(enum) > 0:
		ff.Kind = "select"
		for _, v := range enum {
			ff.Options = append(ff.Options, fmt.Sprint(v))
		}
	case ff.schemaType == "boolean":
		ff.Kind = "checkbox"
	case ff.schemaType == "integer" || ff.schemaType == "number":
		ff.Kind, ff.Step = "number", "any"
		if ff.schemaType == "integer" {
			ff.Step = "1"
		}
		ff.Min, ff.Max = bound(schema["minimum"]), bound(schema["maximum"])
	case ff.schemaType == "string":
		ff.Kind = "text"
		ff.Pattern, _ = schema["pattern"].(string)
	case ff.schemaType == "object" && len(properties(schema)) > 0:
		ff.Kind = "object"
		props := properties(schema)
		for j, key := range slices.Sorted(maps.Keys(props)) {
			sub, _ := props[key].(map[string]any)
			label := key
			if t, ok := sub["title"].(string); ok && t != "" {
				label = t
			}
			child := newFormField(fmt.Sprintf("%s_%d", name, j),
				catalogField{Path: f.Path + "." + key, DisplayName: label, Editable: f.Editable}, sub)
			child.key = key
			ff.Sub = append(ff.Sub, child)
		}
	default: // arrays, open objects, anything the schema leaves open
		ff.Kind = "json"
	}
	ff.show(f.Default)
	return ff
}

// properties returns the properties an object schema declares.
func properties(schema map[string]any) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	return props
}

// show puts v (nil: nothing) in the control as it displays it.
func (ff *formField) show(v any) {
	switch {
	case v == nil:
	case ff.Kind == "object":
		obj, _ := v.(map[string]any)
		ff.base = obj
		b, _ := json.Marshal(obj) // decoded JSON always encodes
		ff.Value = string(b)
		for i := range ff.Sub {
			ff.Sub[i].Value, ff.Sub[i].Checked = "", false
			ff.Sub[i].show(obj[ff.Sub[i].key])
		}
	case ff.Kind == "checkbox":
		ff.Checked, _ = v.(bool)
	default:
		if str, ok := v.(string); ok && ff.Kind != "json" {
			ff.Value = str
		} else {
			b, _ := json.Marshal(v) // decoded JSON always encodes
			ff.Value = string(b)
		}
	}
}

func bound(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return ""
}

// userValues reads the editable controls of a submitted form into the
// order's user_values; a control left empty keeps the item's default. A
// value that cannot be read is noted on its field.
func userValues(r *http.Request, fields []formField) ([]map[string]any, bool) {
	var values []map[string]any
	ok := true
	for i := range fields {
		f := &fields[i]
		if !f.Editable {
			continue
		}
		v, given, read := f.read(r)
		ok = ok && read
		if given && read {
			values = append(values, map[string]any{"path": f.Path, "value": v})
		}
	}
	return values, ok
}

// read reads the control's submitted value: given is false for an empty
// control (the default stays), ok false when the value cannot be read (the
// reason is on the field).
func (f *formField) read(r *http.Request) (v any, given, ok bool) {
	if f.Kind == "object" {
		return f.readObject(r)
	}
	raw := strings.TrimSpace(r.PostFormValue(f.Name))
	f.Value, f.Checked = raw, raw == "true"
	var err error
	switch {
	case f.Kind == "checkbox":
		return raw == "true", true, true
	case raw == "":
		return nil, false, true
	case f.schemaType == "integer":
		v, err = strconv.ParseInt(raw, 10, 64)
	case f.schemaType == "number":
		v, err = strconv.ParseFloat(raw, 64)
	case f.Kind == "json":
		err = json.Unmarshal([]byte(raw), &v)
	default:
		v = raw
	}
	if err != nil {
		f.Error = "not a valid " + cmpOr(f.schemaType, "JSON value")
		return nil, false, false
	}
	return v, true, true
}

// readObject lays the sub-controls' values over the object the form
// showed: a property left empty is left out; nothing given at all keeps
// the default. Its Value becomes the object's JSON (what an update form
// compares with what it showed).
func (f *formField) readObject(r *http.Request) (v any, given, ok bool) {
	obj := maps.Clone(f.base)
	if obj == nil {
		obj = map[string]any{}
	}
	ok = true
	for i := range f.Sub {
		sub := &f.Sub[i]
		sv, subGiven, subOK := sub.read(r)
		ok = ok && subOK
		if subGiven {
			obj[sub.key] = sv
		} else {
			delete(obj, sub.key)
		}
	}
	if !ok {
		return nil, false, false
	}
	b, _ := json.Marshal(obj) // made of decoded values: always encodes
	f.Value = string(b)
	return obj, len(obj) > 0, true
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// orderFormPage shows the form that orders a catalog item.
func (c *Console) orderFormPage(w http.ResponseWriter, r *http.Request, s *session) error {
	item, fields, err := c.orderForm(r, s, r.PathValue("id"))
	if err != nil {
		return err
	}
	c.render(w, "orderform", s, map[string]any{"Item": item, "Fields": fields})
	return nil
}

// postedOrderForm is a submitted order form: its item, its fields with the
// values given, and the data that shows the form again.
type postedOrderForm struct {
	item, defaults map[string]any
	fields         []formField
	values         []map[string]any
	data           map[string]any
}

// readOrderForm reads a submitted order form (after its CSRF check). done
// says it has answered already: a value that cannot be read shows the form
// again, 400, with the reason next to the field.
func (c *Console) readOrderForm(w http.ResponseWriter, r *http.Request, s *session) (f postedOrderForm, done bool, err error) {
	if err := checkCSRF(r, s); err != nil {
		return f, true, err
	}
	if f.item, f.defaults, f.fields, err = c.orderFormSpec(r, s, r.PathValue("id")); err != nil {
		return f, true, err
	}
	f.data = map[string]any{"Item": f.item, "Fields": f.fields, "OrderID": trimmed(r, "order_id"),
		"OrderName": trimmed(r, "display_name")}
	values, ok := userValues(r, f.fields)
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		c.render(w, "orderform", s, f.data)
		return f, true, nil
	}
	f.values = values
	return f, false, nil
}

// placeOrder orders a catalog item from its form. A refusal shows on the
// form: the API's field errors next to their fields, a policy's rejection
// with its reason.
func (c *Console) placeOrder(w http.ResponseWriter, r *http.Request, s *session) error {
	f, done, err := c.readOrderForm(w, r, s)
	if done || err != nil {
		return err
	}
	item, fields, values, data := f.item, f.fields, f.values, f.data
	body := map[string]any{"catalog_item_id": item["ID"], "user_values": values}
	if n := trimmed(r, "display_name"); n != "" {
		body["display_name"] = n
	}
	path := "/api/v1/catalog-item-instances"
	if id := trimmed(r, "order_id"); id != "" {
		path = query(path, map[string]string{"id": id})
	}
	var made struct {
		ID string `json:"id"`
	}
	err = c.call(r, s, http.MethodPost, path, body, &made)
	if apiErr, ok := refusal(err); ok {
		placeFieldErrors(fields, values, apiErr)
		data["Error"] = apiErr
		w.WriteHeader(apiErr.Status)
		c.render(w, "orderform", s, data)
		return nil
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, orderURL(s, made.ID, ""), http.StatusSeeOther)
	return nil
}

// userValueIndex reads the index of a user value or an edit an API field
// error names (user_values[2].value, edits[0].value).
var userValueIndex = regexp.MustCompile(`^(?:user_values|edits)\[(\d+)\]`)

// placeFieldErrors puts each of the API's field errors on the control of
// the user value or edit it names (values: as sent), or of the spec path
// it names.
// markFieldError puts message on the field at path, or on the sub-control
// of an object field at it.
func markFieldError(fields []formField, path any, message string) {
	for i := range fields {
		if fields[i].Path == path {
			fields[i].Error = message
		}
		markFieldError(fields[i].Sub, path, message)
	}
}

func placeFieldErrors(fields []formField, values []map[string]any, e *apiError) {
	for _, fe := range e.Fields {
		var path any
		if m := userValueIndex.FindStringSubmatch(fe.Field); m != nil {
			if n, _ := strconv.Atoi(m[1]); n < len(values) {
				path = values[n]["path"]
			}
		} else if p, ok := strings.CutPrefix(fe.Field, "spec."); ok {
			path = p // the spec's schema refused the value at this path
		}
		markFieldError(fields, path, fe.Message)
	}
}
