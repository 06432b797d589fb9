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
	ID       string // its element's id: the name, or a list row's "f0-1"
	Path     string
	Label    string
	Help     string
	Kind     string // text, number, checkbox, select, json, object, list
	Value    string // as the control shows it
	Checked  bool
	Options  []string
	Blank    bool // a select's first option is empty (a list row's)
	Min, Max string
	Step     string
	Pattern  string
	Editable bool
	Error    string
	// Rows are a list's controls, one per element and empty ones to add
	// elements with (all named Name: the browser sends them in order);
	// item is the control an element gets, made from the items' schema.
	Rows []formField
	item *formField
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
	paths := make([]string, len(ci.Fields))
	for i, f := range ci.Fields {
		paths[i] = f.Path
		own := f.Default
		if f.Default == nil {
			f.Default = valueAt(ci.Defaults, f.Path)
		}
		schema := schemaAt(st.Schema, f.Path)
		for k, v := range f.ValidationSchema {
			schema[k] = v
		}
		ff := newFormField(fmt.Sprintf("f%d", i), f, withItems(schema, st.Schema))
		ff.defaultValue = own
		fields = append(fields, ff)
	}
	for i, p := range fixedPaths("", ci.Defaults, paths) {
		schema := schemaAt(st.Schema, p)
		label, _ := schema["title"].(string)
		if label == "" { // its name: "command", not the whole path, which shows beside it
			label = sentenceCase(strings.ReplaceAll(p[strings.LastIndex(p, ".")+1:], "_", " "))
		}
		ff := newFormField(fmt.Sprintf("x%d", i), catalogField{Path: p, DisplayName: label, Default: valueAt(ci.Defaults, p)},
			withItems(schema, st.Schema))
		fields = besideItsSiblings(fields, ff)
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

// withItems resolves a local $ref of an array schema's items
// ("#/$defs/identifier", against root), so that their type is known.
func withItems(schema, root map[string]any) map[string]any {
	it := items(schema)
	ref, _ := it["$ref"].(string)
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		if name, ok := strings.CutPrefix(ref, prefix); ok {
			defs, _ := root[strings.Trim(prefix, "#/")].(map[string]any)
			if def, ok := defs[name].(map[string]any); ok {
				schema["items"] = def
			}
		}
	}
	return schema
}

// fixedPaths are the paths of the item's defaults that no field lets an
// order change (sleeper's process.command), leaves of objects: the form
// shows them as fixed, so that what is ordered is seen whole.
func fixedPaths(prefix string, defaults map[string]any, fields []string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(defaults)) {
		p := strings.TrimPrefix(prefix+"."+k, ".")
		if slices.ContainsFunc(fields, func(f string) bool { return f == p || under(p, f) }) {
			continue // a field's, or inside one
		}
		if m, ok := defaults[k].(map[string]any); ok && len(m) > 0 {
			out = append(out, fixedPaths(p, m, fields)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// under says whether path is inside the value at parent.
func under(path, parent string) bool {
	rest, ok := strings.CutPrefix(path, parent)
	return ok && rest != "" && (rest[0] == '.' || rest[0] == '[')
}

// besideItsSiblings puts a fixed value before the first field of the same
// object (sleeper's command before its arguments), else last.
func besideItsSiblings(fields []formField, fixed formField) []formField {
	parent := func(p string) string {
		if i := strings.LastIndex(p, "."); i >= 0 {
			return p[:i]
		}
		return ""
	}
	at := slices.IndexFunc(fields, func(f formField) bool { return f.Editable && parent(f.Path) == parent(fixed.Path) })
	if at < 0 {
		return append(fields, fixed)
	}
	return slices.Insert(fields, at, fixed)
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
	case ff.schemaType == "array" && scalar(items(schema)):
		// One control per element beats JSON for a list of strings or
		// numbers (issue 46, item 11); lists of objects stay JSON.
		ff.Kind = "list"
		item := newFormField(name, catalogField{Path: f.Path, Editable: f.Editable}, items(schema))
		if item.Kind == "checkbox" { // an unticked box sends nothing: no element
			item.Kind, item.Options = "select", []string{"true", "false"}
		}
		item.Blank = item.Kind == "select"
		ff.item = &item
	default: // arrays of objects, open objects, anything the schema leaves open
		ff.Kind = "json"
	}
	ff.ID = name
	ff.show(f.Default)
	return ff
}

// items is an array schema's items schema.
func items(schema map[string]any) map[string]any {
	it, _ := schema["items"].(map[string]any)
	return it
}

// scalar says whether a schema is of strings, numbers or booleans.
func scalar(schema map[string]any) bool {
	switch schema["type"] {
	case "string", "integer", "number", "boolean":
		return true
	}
	return false
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
	case ff.Kind == "list":
		elems, _ := v.([]any)
		shown := make([]string, len(elems))
		for i, e := range elems {
			shown[i] = elementText(e)
		}
		ff.setRows(shown, 2, nil)
		b, _ := json.Marshal(elems) // decoded JSON always encodes
		ff.Value = string(b)
	default:
		if str, ok := v.(string); ok && ff.Kind != "json" {
			ff.Value = str
		} else {
			b, _ := json.Marshal(v) // decoded JSON always encodes
			ff.Value = string(b)
		}
	}
}

// setRows lays out a list's rows: one per value shown, then blank empty
// ones; errs holds a row's error by its index.
func (ff *formField) setRows(values []string, blank int, errs map[int]string) {
	ff.Rows = make([]formField, 0, len(values)+blank)
	for i := range len(values) + blank {
		row := *ff.item
		row.ID = fmt.Sprintf("%s-%d", ff.Name, i)
		row.Label = fmt.Sprintf("%s, item %d", ff.Label, i+1)
		if i < len(values) {
			row.Value = values[i]
		}
		row.Error = errs[i]
		ff.Rows = append(ff.Rows, row)
	}
}

// elementText is a list element as its control shows it.
func elementText(v any) string {
	if str, ok := v.(string); ok {
		return str
	}
	b, _ := json.Marshal(v) // decoded JSON always encodes
	return string(b)
}

// Invalid says whether the control or one of its rows has an error.
func (ff formField) Invalid() bool {
	if ff.Error != "" {
		return true
	}
	for _, row := range ff.Rows {
		if row.Error != "" {
			return true
		}
	}
	return false
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
	switch f.Kind {
	case "object":
		return f.readObject(r)
	case "list":
		return f.readList(r)
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

// readList reads a list's rows: the non-empty ones, in order, each of the
// items' type (emptying a row removes its element). A list the form showed
// elements in is given even when emptied: the order then asks for none;
// one that was not sent at all keeps the default.
// Asked for more rows ("more" names the list), it shows three more.
func (f *formField) readList(r *http.Request) (v any, given, ok bool) {
	shown := f.Value != "" && f.Value != "[]"
	sent, present := r.PostForm[f.Name]
	if !present { // a form without the list: the default stays
		return nil, false, true
	}
	var texts []string
	elems := []any{}
	errs := map[int]string{}
	for _, raw := range sent {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		i := len(texts)
		texts = append(texts, raw)
		var elem any = raw
		var err error
		switch f.item.schemaType {
		case "integer":
			elem, err = strconv.ParseInt(raw, 10, 64)
		case "number":
			elem, err = strconv.ParseFloat(raw, 64)
		case "boolean":
			elem, err = strconv.ParseBool(raw)
		}
		if err != nil {
			errs[i] = fmt.Sprintf("%s[%d]: not a valid %s.", f.Path, i, f.item.schemaType)
			continue
		}
		elems = append(elems, elem)
	}
	blank := 2
	if r.PostFormValue("more") == f.Name {
		blank = len(sent) - len(texts) + 3
	}
	f.setRows(texts, blank, errs)
	if len(errs) > 0 {
		return nil, false, false
	}
	b, _ := json.Marshal(elems) // made of decoded values: always encodes
	f.Value = string(b)
	return elems, len(elems) > 0 || shown, true
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
	if moreRows(r) {
		c.render(w, "orderform", s, f.data)
		return f, true, nil
	}
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

// moreRows says the form was sent by a list's More rows button: it is
// shown again with more rows (readList adds them), and nothing is sent.
func moreRows(r *http.Request) bool { return r.PostFormValue("more") != "" }

// placeFieldErrors puts each of the API's field errors on the control of
// the spec path it names: a list's row for an element (process.args[1]),
// else the closest control at or above it, naming the path below. The
// path is the error's own, or that of the user value or edit it names
// (values: as sent), or the spec path it names.
func placeFieldErrors(fields []formField, values []map[string]any, e *apiError) {
	for i := range e.Fields {
		fe := &e.Fields[i]
		path := fe.Path
		if m := userValueIndex.FindStringSubmatch(fe.Field); path == "" && m != nil {
			if n, _ := strconv.Atoi(m[1]); n < len(values) {
				path, _ = values[n]["path"].(string)
				if below, ok := strings.CutPrefix(fe.Field, m[0]+".value"); ok {
					path += below // an element or member of the value
				}
			}
		} else if p, ok := strings.CutPrefix(fe.Field, "spec."); path == "" && ok {
			path = p // the spec's schema refused the value at this path
		}
		if path != "" {
			fe.at = markFieldError(fields, path, fe.Sentence())
		}
	}
}

// markFieldError puts message on the control at path, or on the closest
// one above it (an object's member, a list's row, a JSON field's part,
// then named in the message), and returns that control's path ("" when
// none is).
func markFieldError(fields []formField, path, message string) string {
	for i := range fields {
		f := &fields[i]
		if !f.Editable {
			continue
		}
		if path == f.Path {
			f.Error = message
			return f.Path
		}
		if !under(path, f.Path) {
			continue
		}
		if at := markFieldError(f.Sub, path, message); at != "" {
			return at
		}
		if m := rowIndex.FindStringSubmatch(path[len(f.Path):]); m != nil && f.Kind == "list" {
			if n, _ := strconv.Atoi(m[1]); n < len(f.Rows) {
				f.Rows[n].Error = path + ": " + message
				return f.Path
			}
		}
		f.Error = path + ": " + message
		return f.Path
	}
	return ""
}

// rowIndex reads the element a path under a list names: [1].
var rowIndex = regexp.MustCompile(`^\[(\d+)\]$`)
