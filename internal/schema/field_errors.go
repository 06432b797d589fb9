package schema

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/stewardhq/steward/internal/invalid"
)

// printer renders the messages of error kinds this file has no wording for.
// A Printer is safe for concurrent use.
var printer = message.NewPrinter(language.English)

// fieldErrors flattens a validation error tree into one field per failing
// location, deduplicated and sorted by field. Fields are dotted paths under
// root ("spec.vcpu.count", "spec.storage.disks[1].name"); a missing property
// is named itself ("spec.guest_os": "is required"). inst is the validated
// value, walked to tell array indices from property names; doc is the schema
// document, or nil, where messages look up descriptions.
func fieldErrors(verr *jsonschema.ValidationError, root string, inst, doc any) []invalid.Field {
	return flattener{root: root, inst: inst, doc: doc}.fields(verr)
}

// fields flattens verr as [fieldErrors] describes.
func (f flattener) fields(verr *jsonschema.ValidationError) []invalid.Field {
	entries := f.walk(verr)
	fields := make([]invalid.Field, 0, len(entries))
	for _, e := range entries {
		fields = append(fields, invalid.Field{Field: e.field, Message: e.message, Detail: e.detail})
	}
	slices.SortFunc(fields, func(a, b invalid.Field) int {
		return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Message, b.Message), cmp.Compare(a.Detail, b.Detail))
	})
	return slices.Compact(fields)
}

// entry is one leaf failure. missing is set for a required property that is
// absent, parent to the field of the object that lacks it: anyOf/oneOf
// alternatives that only differ in what they require collapse into one
// message. wrongType marks a type mismatch, which tells alternatives apart.
// detail is what message cannot put in words (a pattern).
type entry struct {
	field, message  string
	detail          string
	missing, parent string
	wrongType       bool
}

type flattener struct {
	root string
	inst any
	doc  any
	// open drops the failures that only say something is missing (a
	// required property, too few items or properties, no item matching
	// "contains", an alternative that more properties would satisfy): a
	// fragment, such as a catalog item's defaults, may leave them to the
	// values a user adds later.
	open bool
}

// walk returns the leaves under e. Wrappers (the root, $ref, allOf, a group
// of sibling failures) only carry causes; alternatives get one verdict;
// every other kind is a leaf, even when it has causes (the items "contains"
// tried are not what the client must fix).
func (f flattener) walk(e *jsonschema.ValidationError) []entry {
	loc := e.InstanceLocation
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		var out []entry
		for _, c := range e.Causes {
			out = append(out, f.walk(c)...)
		}
		return out
	case *kind.Required, *kind.DependentRequired, *kind.Dependency, *kind.MinItems, *kind.MinProperties,
		*kind.Contains, *kind.MinContains:
		if f.open {
			return nil
		}
		return f.closed(e)
	case *kind.AnyOf:
		return f.alternatives(e, "must include %s")
	case *kind.OneOf:
		if len(k.Subschemas) > 0 {
			return f.leaf(loc, "must match exactly one of the allowed forms, but matches several")
		}
		return f.alternatives(e, "must include exactly one of %s")
	default:
		return f.closed(e)
	}
}

// closed words a leaf failure (a missing property included).
func (f flattener) closed(e *jsonschema.ValidationError) []entry {
	loc := e.InstanceLocation
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		parent := f.path(loc)
		var out []entry
		for _, p := range k.Missing {
			out = append(out, entry{field: f.path(append(slices.Clip(loc), p)), message: "is required", missing: p, parent: parent})
		}
		return out
	case *kind.DependentRequired:
		return f.missing(loc, k.Missing, fmt.Sprintf("is required when %s is set", k.Prop))
	case *kind.Dependency:
		return f.missing(loc, k.Missing, fmt.Sprintf("is required when %s is set", k.Prop))
	case *kind.AdditionalProperties:
		return f.missing(loc, k.Properties, "is not allowed")
	case *kind.PropertyNames:
		return f.missing(loc, []string{k.Property}, "is not an allowed property name")
	case *kind.UniqueItems:
		return f.leaf(append(slices.Clip(loc), strconv.Itoa(k.Duplicates[1])), fmt.Sprintf("must be unique, but equals item %d", k.Duplicates[0]))
	case *duplicateKey:
		at := append(slices.Clip(loc), strconv.Itoa(k.Duplicate), k.Key)
		return f.leaf(at, fmt.Sprintf("must be unique, but item %d has the same %s", k.First, k.Key))
	case *kind.Type:
		return []entry{{field: f.path(loc), message: describe(k), wrongType: true}}
	case *kind.Contains:
		contains, _ := f.schemaAt(e.SchemaURL)["contains"].(map[string]any)
		if d, _ := contains["description"].(string); d != "" {
			return f.leaf(loc, "must include "+d)
		}
		return f.leaf(loc, "must include an item matching the contains schema")
	case *kind.Pattern:
		// A regular expression is no answer for a person: the schema's own
		// words say what the form is, when it has them, and the pattern
		// follows as the detail.
		msg := describe(k)
		if d, _ := f.schemaAt(e.SchemaURL)["description"].(string); d != "" {
			msg += ": " + d
		}
		return []entry{{field: f.path(loc), message: msg, detail: "pattern " + truncate(k.Want, maxPatternDetail)}}
	default:
		return f.leaf(loc, describe(e.ErrorKind))
	}
}

// alternatives judges a failed anyOf or oneOf (none matched). When every
// alternative only lacks properties of the same object, the client is told
// which to add (container: "must include image or process"). Otherwise it is
// told what is wrong with the alternative that came closest: one the value's
// type fits, then the one with fewest failures, then the first. Listing
// every alternative's failures would ask for contradictory fixes.
func (f flattener) alternatives(e *jsonschema.ValidationError, format string) []entry {
	parent := f.path(e.InstanceLocation)
	// distance ranks an alternative's failures: a type mismatch at the value
	// itself first, then the number of failures.
	distance := func(got []entry) int {
		d := len(got)
		if slices.ContainsFunc(got, func(g entry) bool { return g.wrongType && g.field == parent }) {
			d += 1 << 20
		}
		return d
	}
	var best []entry
	var options []string
	onlyMissing := len(e.Causes) > 0
	for i, c := range e.Causes {
		got := f.walk(c)
		if f.open && len(got) == 0 {
			return nil // this alternative only lacks something a user may add
		}
		if i == 0 || distance(got) < distance(best) {
			best = got
		}
		var names []string
		for _, g := range got {
			if g.missing == "" || g.parent != parent {
				onlyMissing = false
				break
			}
			names = append(names, g.missing)
		}
		if len(names) == 0 {
			onlyMissing = false
		}
		options = append(options, strings.Join(names, " and "))
	}
	if onlyMissing {
		return f.leaf(e.InstanceLocation, fmt.Sprintf(format, strings.Join(slices.Compact(options), " or ")))
	}
	if len(best) == 0 {
		return f.leaf(e.InstanceLocation, "must match one of the allowed forms")
	}
	return best
}

func (f flattener) leaf(loc []string, msg string) []entry {
	return []entry{{field: f.path(loc), message: msg}}
}

// missing reports msg for each named property of the object at loc.
func (f flattener) missing(loc, props []string, msg string) []entry {
	out := make([]entry, 0, len(props))
	for _, p := range props {
		out = append(out, entry{field: f.path(append(slices.Clip(loc), p)), message: msg})
	}
	return out
}

// simpleKey is a property name written after a dot; others are quoted in
// brackets (labels["app.kubernetes.io/name"]), so a path reads back as one
// location.
var simpleKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// path renders an instance location under the root: ".name" for a property,
// "[i]" for an array index (the catalog's field path syntax,
// "process.env[0].value").
func (f flattener) path(loc []string) string {
	var b strings.Builder
	b.WriteString(f.root)
	cur := f.inst
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			cur = nil
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			}
		case map[string]any:
			writeKey(&b, tok)
			cur = c[tok]
		default:
			writeKey(&b, tok)
			cur = nil
		}
	}
	return b.String()
}

func writeKey(b *strings.Builder, key string) {
	switch {
	case !simpleKey.MatchString(key):
		b.WriteString("[" + strconv.Quote(key) + "]")
	case b.Len() == 0:
		b.WriteString(key)
	default:
		b.WriteString("." + key)
	}
}

// schemaAt returns the schema object at url in the document (where
// messages find a "description"), or nil.
func (f flattener) schemaAt(url string) map[string]any {
	_, frag, ok := strings.Cut(url, "#")
	if !ok || f.doc == nil {
		return nil
	}
	node := f.doc
	if frag != "" {
		for tok := range strings.SplitSeq(strings.TrimPrefix(frag, "/"), "/") {
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			switch n := node.(type) {
			case map[string]any:
				node = n[tok]
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(n) {
					return nil
				}
				node = n[i]
			default:
				return nil
			}
		}
	}
	obj, _ := node.(map[string]any)
	return obj
}

// maxPatternDetail is how much of a pattern a failure's detail shows, in
// characters: enough to recognise it, not 200 characters of it.
const maxPatternDetail = 64

// truncate returns s cut to n characters, with an ellipsis when cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// describe words a leaf failure for a client, without echoing the value
// (specs may hold secrets).
func describe(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = article(w)
		}
		return fmt.Sprintf("must be %s, not %s", strings.Join(want, " or "), article(k.Got))
	case *kind.Const:
		return "must be " + display(k.Want)
	case *kind.Enum:
		if len(k.Want) == 1 {
			return "must be " + display(k.Want[0])
		}
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = display(w)
		}
		return "must be one of " + strings.Join(want, ", ")
	case *kind.Pattern:
		return "does not have the form this field takes"
	case *kind.Format:
		return "must be a valid " + k.Want
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %s long", plural(k.Want, "character"))
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %s long", plural(k.Want, "character"))
	case *kind.Minimum:
		return "must be at least " + number(k.Want)
	case *kind.Maximum:
		return "must be at most " + number(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be greater than " + number(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be less than " + number(k.Want)
	case *kind.MultipleOf:
		return "must be a multiple of " + number(k.Want)
	case *kind.MinItems:
		return "must have at least " + plural(k.Want, "item")
	case *kind.MaxItems:
		return "must have at most " + plural(k.Want, "item")
	case *kind.MinProperties:
		return "must have at least " + plural(k.Want, "property")
	case *kind.MaxProperties:
		return "must have at most " + plural(k.Want, "property")
	case *kind.MinContains:
		return "must include at least " + plural(k.Want, "matching item")
	case *kind.MaxContains:
		return "must include at most " + plural(k.Want, "matching item")
	case *kind.FalseSchema:
		return "is not allowed"
	case *kind.Not:
		return "must not match the schema under \"not\""
	default:
		return k.LocalizedString(printer)
	}
}

// article puts "a" or "an" before a JSON type's name ("an integer");
// null stays null.
func article(typ string) string {
	switch {
	case typ == "null":
		return typ
	case strings.ContainsAny(typ[:min(1, len(typ))], "aeiou"):
		return "an " + typ
	default:
		return "a " + typ
	}
}

func display(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func number(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
