package ctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// object is one resource as the server sent it: the bytes, for -o json to
// keep its member order, and decoded, for tables.
type object struct {
	raw json.RawMessage
	m   map[string]any
}

func decodeObject(raw []byte) (object, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return object{}, fmt.Errorf("the server's answer is not a JSON object: %w", err)
	}
	return object{raw: raw, m: m}, nil
}

// str is the object's member at a dotted path as text.
func (o object) str(path string) string { return text(lookup(o.m, path)) }

// name is the object's path ("policies/vm-cap"), as -o name prints it and
// the commands take it back (KIND/ID).
func (o object) name(k *kind) string {
	if k.nameOf != nil {
		return k.nameOf(o)
	}
	if p := o.str("path"); p != "" {
		return p
	}
	return k.name + "/" + o.str("id")
}

// id is the object's id as the commands take it after its kind.
func (o object) id(k *kind) string {
	if k.nameOf == nil {
		return o.str("id")
	}
	return strings.TrimPrefix(k.nameOf(o), k.name+"/")
}

func lookup(m map[string]any, path string) any {
	var v any = m
	for part := range strings.SplitSeq(path, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[part]
	}
	return v
}

// text shows a JSON value in a table cell: scalars as they are, lists of
// scalars comma-separated, maps as k=v pairs, anything else as JSON.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return fmt.Sprint(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			switch e.(type) {
			case map[string]any, []any:
				b, _ := json.Marshal(v)
				return string(b)
			}
			parts[i] = text(e)
		}
		return strings.Join(parts, ",")
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + text(v[k])
		}
		return strings.Join(parts, ",")
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// A column is a table column: its header and how a cell is made.
type column struct {
	header string
	cell   func(o object, now time.Time) string
}

func field(path string) func(object, time.Time) string {
	return func(o object, _ time.Time) string { return o.str(path) }
}

// age is the time since the timestamp at path, as kubectl shows it: 45s,
// 12m, 5h, 3d.
func age(path string) func(object, time.Time) string {
	return func(o object, now time.Time) string {
		t, err := time.Parse(time.RFC3339Nano, o.str(path))
		if err != nil {
			return ""
		}
		return shortDuration(now.Sub(t))
	}
}

func shortDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

func count(path string) func(object, time.Time) string {
	return func(o object, _ time.Time) string {
		l, ok := lookup(o.m, path).([]any)
		if !ok {
			return ""
		}
		return fmt.Sprint(len(l))
	}
}

// ready is an order's Ready condition: "True", or "False (Provisioning)".
func ready(o object, _ time.Time) string {
	c := condition(o, "Ready")
	if c == nil {
		return ""
	}
	if text(c["status"]) == "True" {
		return "True"
	}
	return fmt.Sprintf("%s (%s)", text(c["status"]), text(c["reason"]))
}

// health is an order's Healthy condition, which only orders of a service
// type with a runtime have: "healthy", or the reason it is not, lowercased
// ("degraded", "failed"); "" without the condition.
func health(o object, _ time.Time) string {
	c := condition(o, "Healthy")
	switch {
	case c == nil:
		return ""
	case text(c["status"]) == "True":
		return "healthy"
	case text(c["reason"]) != "":
		return strings.ToLower(text(c["reason"]))
	}
	return "unhealthy"
}

func condition(o object, typ string) map[string]any {
	conds, _ := o.m["conditions"].([]any)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

// editableFields lists a catalog item's editable field paths.
func editableFields(o object, _ time.Time) string {
	fields, _ := o.m["fields"].([]any)
	var paths []string
	for _, f := range fields {
		if m, ok := f.(map[string]any); ok && m["editable"] == true {
			paths = append(paths, text(m["path"]))
		}
	}
	return strings.Join(paths, ",")
}

// Output formats (-o).
const (
	outTable = ""
	outWide  = "wide"
	outJSON  = "json"
	outYAML  = "yaml"
	outName  = "name"
)

func checkOutput(o string) error {
	switch o {
	case outTable, outWide, outJSON, outYAML, outName:
		return nil
	}
	return usagef("-o %q: the output formats are json, yaml, wide and name (default: a table)", o)
}

// printer writes objects of one kind in one format.
type printer struct {
	w      io.Writer
	k      *kind
	format string
	now    time.Time
	// allProjects puts a PROJECT column first (get -A).
	allProjects bool
}

// list prints a collection: a table with a header, a JSON or YAML array,
// or a name a line.
func (p printer) list(objs []object) error {
	switch p.format {
	case outJSON, outYAML:
		raws := make([]json.RawMessage, len(objs))
		for i, o := range objs {
			raws[i] = o.raw
		}
		return p.encode(raws)
	case outName:
		for _, o := range objs {
			if _, err := fmt.Fprintln(p.w, o.name(p.k)); err != nil {
				return err
			}
		}
		return nil
	}
	cols := p.columns()
	rows := make([][]string, len(objs))
	for i, o := range objs {
		rows[i] = p.cells(cols, o)
	}
	t := newLayout(headers(cols), rows)
	if err := t.print(p.w, headers(cols)); err != nil {
		return err
	}
	for _, r := range rows {
		if err := t.print(p.w, r); err != nil {
			return err
		}
	}
	return nil
}

func headers(cols []column) []string {
	h := make([]string, len(cols))
	for i, c := range cols {
		h[i] = c.header
	}
	return h
}

// layout is a table's column widths, the widest cell of each column but
// the last, which is printed as it is; three spaces part the columns.
type layout struct{ widths []int }

// columnGap is the space between two columns.
const columnGap = 3

func newLayout(header []string, rows [][]string) *layout {
	t := &layout{widths: make([]int, len(header))}
	t.fit(header)
	for _, r := range rows {
		t.fit(r)
	}
	return t
}

// fit widens the columns a row's cells do not fit in, and says whether
// any was.
func (t *layout) fit(cells []string) (grew bool) {
	for i, c := range cells[:max(0, len(cells)-1)] {
		if n := utf8.RuneCountInString(c); n > t.widths[i] {
			t.widths[i], grew = n, true
		}
	}
	return grew
}

// print writes one line of cells, each padded to its column's width.
func (t *layout) print(w io.Writer, cells []string) error {
	var b strings.Builder
	for i, c := range cells {
		b.WriteString(c)
		if i < len(cells)-1 {
			b.WriteString(strings.Repeat(" ", t.widths[i]-utf8.RuneCountInString(c)+columnGap))
		}
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// one prints a single object: its one-row table, or the object itself.
func (p printer) one(o object) error {
	switch p.format {
	case outJSON, outYAML:
		return p.encode(o.raw)
	}
	return p.list([]object{o})
}

func (p printer) columns() []column {
	cols := p.k.columns
	if p.format == outWide {
		cols = append(slices.Clip(cols), p.k.wide...)
	}
	if p.allProjects {
		cols = append([]column{projectCol}, slices.DeleteFunc(slices.Clone(cols), func(c column) bool {
			return c.header == projectCol.header
		})...)
	}
	return cols
}

// cells are an object's cells in a table: "<none>" for an empty one, and
// no tab or newline, which would break the table's alignment.
func (p printer) cells(cols []column, o object) []string {
	cells := make([]string, len(cols))
	for i, c := range cols {
		cells[i] = c.cell(o, p.now)
		if cells[i] == "" {
			cells[i] = "<none>"
		}
		cells[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(cells[i])
	}
	return cells
}

// encode writes v as indented JSON, or as YAML.
func (p printer) encode(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if p.format == outYAML {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
		_, err = p.w.Write(b)
		return err
	}
	_, err = fmt.Fprintf(p.w, "%s\n", b)
	return err
}

// table reports whether p prints a table (plain or wide).
func (p printer) table() bool { return p.format == outTable || p.format == outWide }
