package policy

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
)

// A later policy may only tighten a field's constraint (DCM's rule, at
// every level pair and within a level by priority). Every schema applies
// anyway (allOf), so a looser or contradicting one could never let an
// invalid value through; it is refused so that its author learns that it
// is dead instead of believing it in force.
//
// narrows decides what can be decided from the keywords themselves:
//
//   - a bound (maximum/exclusiveMaximum, minimum/exclusiveMinimum,
//     max/minLength, max/minItems, max/minProperties, max/minContains) may
//     not be looser than the same bound an earlier policy set;
//   - type may only narrow (integer is narrower than number);
//   - multipleOf may become a multiple of the earlier one, not a divisor;
//   - uniqueItems true may not become false;
//   - an enum or const narrows the field to the values every constraint
//     admits (DCM intersects enums: {a,b,c} then {a,c,d} leaves {a,c}); its
//     values are checked against the earlier compiled schemas, whatever the
//     earlier keywords were, and only an empty intersection conflicts;
//   - and together the constraints must leave some value: bounds that
//     cross, types that share nothing, or an enum/const with no value the
//     others allow leave none.
//
// Everything else is not compared: both schemas apply and the first value
// that breaks one is refused. That covers pattern against pattern and
// format against format (whether one regular language contains another is
// not something to decide per request), multipleOf values neither of which
// divides the other (4 and 3 both apply: multiples of 12), and the
// applicators (properties, items, allOf/anyOf/oneOf/not, if/then/else).

// boundFamily is a pair of keywords bounding the same quantity.
type boundFamily struct {
	upper, exclusiveUpper string // exclusiveUpper is "" for integer bounds
	lower, exclusiveLower string
}

var boundFamilies = [...]boundFamily{
	{upper: "maximum", exclusiveUpper: "exclusiveMaximum", lower: "minimum", exclusiveLower: "exclusiveMinimum"},
	{upper: "maxLength", lower: "minLength"},
	{upper: "maxItems", lower: "minItems"},
	{upper: "maxProperties", lower: "minProperties"},
	{upper: "maxContains", lower: "minContains"},
}

// bound is one end of a range: a value, whether it is excluded, and the
// keyword that set it.
type bound struct {
	v         *big.Rat
	exclusive bool
	keyword   string
}

func (b *bound) String() string { return fmt.Sprintf("%s %s", b.keyword, b.v.RatString()) }

// cmpRat compares two numbers; integers (the usual bounds) without
// allocating, as big.Rat.Cmp does.
func cmpRat(a, b *big.Rat) int {
	if a.IsInt() && b.IsInt() {
		return a.Num().Cmp(b.Num())
	}
	return a.Cmp(b)
}

// tighterUpper reports whether a is a stricter upper bound than b.
func tighterUpper(a, b *bound) bool {
	c := cmpRat(a.v, b.v)
	return c < 0 || c == 0 && a.exclusive && !b.exclusive
}

// tighterLower reports whether a is a stricter lower bound than b.
func tighterLower(a, b *bound) bool {
	c := cmpRat(a.v, b.v)
	return c > 0 || c == 0 && a.exclusive && !b.exclusive
}

// summary is what narrows compares of one schema, read once when the
// schema is compiled (and cached with it).
type summary struct {
	// compared is false for a boolean schema, which is not compared.
	compared     bool
	upper, lower [len(boundFamilies)]*bound
	types        []string
	finite       []any
	finiteKW     string // "const" or "enum", "" when neither
	multipleOf   *big.Rat
	uniqueItems  bool
	noUniqueness bool // uniqueItems: false, said explicitly
}

func summarize(schema any) *summary {
	s, ok := schema.(map[string]any)
	if !ok {
		return &summary{}
	}
	sum := &summary{compared: true, types: types(s), multipleOf: nil}
	for i, fam := range boundFamilies {
		sum.upper[i] = pickBound(s, fam.upper, fam.exclusiveUpper, tighterUpper)
		sum.lower[i] = pickBound(s, fam.lower, fam.exclusiveLower, tighterLower)
	}
	if c, ok := s["const"]; ok {
		sum.finite, sum.finiteKW = []any{c}, "const"
	} else if e, ok := s["enum"].([]any); ok {
		sum.finite, sum.finiteKW = e, "enum"
	}
	if m, ok := number(s["multipleOf"]); ok {
		sum.multipleOf = m
	}
	sum.uniqueItems = s["uniqueItems"] == true
	sum.noUniqueness = s["uniqueItems"] == false
	return sum
}

// pickBound returns the stricter of a schema's inclusive and exclusive
// bound keywords, nil when it has neither.
func pickBound(s map[string]any, inclusive, exclusive string, tighter func(a, b *bound) bool) *bound {
	var out *bound
	if v, ok := number(s[inclusive]); ok {
		out = &bound{v: v, keyword: inclusive}
	}
	if exclusive != "" {
		if v, ok := number(s[exclusive]); ok {
			if b := (&bound{v: v, exclusive: true, keyword: exclusive}); out == nil || tighter(b, out) {
				out = b
			}
		}
	}
	return out
}

// narrows checks that n, a new constraint on the field at path, is at
// least as strict as each earlier one and that together they leave a
// value. It returns a [*ConflictError] naming n's policy and the earlier
// one otherwise.
func narrows(path string, earlier []fieldConstraint, n fieldConstraint) error {
	if !n.sum.compared || len(earlier) == 0 {
		return nil
	}
	conflict := conflictOn{path, n.by}.error
	const loosens = "%s loosens %s set by policy %s: a later policy may only tighten a constraint"
	ns := n.sum
	for i := range earlier {
		e := &earlier[i]
		es := e.sum
		if !es.compared {
			continue
		}
		for f := range boundFamilies {
			if nu, eu := ns.upper[f], es.upper[f]; nu != nil && eu != nil && tighterUpper(eu, nu) {
				return conflict(e, nu.keyword, loosens, nu, eu, e.by.Ref())
			}
			if nl, el := ns.lower[f], es.lower[f]; nl != nil && el != nil && tighterLower(el, nl) {
				return conflict(e, nl.keyword, loosens, nl, el, e.by.Ref())
			}
		}
		if nt, et := ns.types, es.types; nt != nil && et != nil {
			if !typesShare(nt, et) {
				return conflict(e, "type", "type %v leaves no value with type %v set by policy %s", nt, et, e.by.Ref())
			}
			if wider := typesOutside(nt, et); len(wider) > 0 {
				return conflict(e, "type", "type %v admits %v, which type %v set by policy %s forbids",
					nt, wider, et, e.by.Ref())
			}
		}
		if nm, em := ns.multipleOf, es.multipleOf; nm != nil && em != nil && cmpRat(nm, em) != 0 && isMultiple(em, nm) {
			return conflict(e, "multipleOf", "multipleOf %s loosens multipleOf %s set by policy %s: a later policy may only tighten a constraint",
				nm.RatString(), em.RatString(), e.by.Ref())
		}
		if es.uniqueItems && ns.noUniqueness {
			return conflict(e, "uniqueItems", "uniqueItems false loosens uniqueItems true set by policy %s", e.by.Ref())
		}
	}
	if err := intersects(earlier, n, conflict); err != nil {
		return err
	}
	return leavesAValue(earlier, n, conflict)
}

// intersects checks a new enum or const against the earlier constraints.
// As in DCM, a later enum narrows the field to the values both admit: the
// values an earlier constraint forbids simply drop out (every schema
// applies, so the value must lie in the intersection). Only an empty
// intersection conflicts; it names the earlier constraint that removed the
// last value.
func intersects(earlier []fieldConstraint, n fieldConstraint,
	conflict func(with *fieldConstraint, keyword, format string, args ...any) error) error {
	kw := n.sum.finiteKW
	if kw == "" {
		return nil
	}
	left := n.sum.finite
	for i := range earlier {
		e := &earlier[i]
		left = slices.DeleteFunc(slices.Clone(left), func(v any) bool { return e.valid.Validate(v) != nil })
		if len(left) == 0 {
			return conflict(e, kw, "%s %s leaves no value that the constraint set by policy %s allows (with the earlier constraints)",
				kw, jsonText(n.sum.finite), e.by.Ref())
		}
	}
	return nil
}

// conflictOn makes the conflicts of one policy's constraint on one field.
type conflictOn struct {
	path string
	by   Policy
}

func (c conflictOn) error(with *fieldConstraint, keyword, format string, args ...any) error {
	ref := with.by.Ref()
	return &ConflictError{Policy: c.by.Ref(), Field: c.path, With: &ref, Keyword: keyword, Reason: fmt.Sprintf(format, args...)}
}

// leavesAValue checks the constraints together: bounds that cross, types
// that share nothing, an earlier enum or const that n rejects entirely.
// The earlier constraints left a value (each was checked on its way in),
// so an empty result is n's doing and the earlier policy on the other side
// is named.
func leavesAValue(earlier []fieldConstraint, n fieldConstraint,
	conflict func(with *fieldConstraint, keyword, format string, args ...any) error) error {
	for f := range boundFamilies {
		nu, nl := n.sum.upper[f], n.sum.lower[f]
		if nu == nil && nl == nil {
			continue // n adds nothing to this range
		}
		// The strictest bounds on each side, and the constraint that set them.
		upper, lower := nu, nl
		var upperBy, lowerBy *fieldConstraint
		for i := range earlier {
			es := earlier[i].sum
			if u := es.upper[f]; u != nil && (upper == nil || tighterUpper(u, upper)) {
				upper, upperBy = u, &earlier[i]
			}
			if l := es.lower[f]; l != nil && (lower == nil || tighterLower(l, lower)) {
				lower, lowerBy = l, &earlier[i]
			}
		}
		if upper == nil || lower == nil {
			continue
		}
		if c := cmpRat(lower.v, upper.v); c > 0 || c == 0 && (lower.exclusive || upper.exclusive) {
			other, kw := upperBy, upper.keyword
			if other == nil {
				other, kw = lowerBy, lower.keyword
			}
			if other == nil {
				continue // n contradicts itself; not a conflict between policies
			}
			return conflict(other, kw, "%s and %s leave no value (policy %s sets the %s)", lower, upper, other.by.Ref(), kw)
		}
	}
	if nt := n.sum.types; nt != nil {
		var common []string
		var last *fieldConstraint
		for i := range earlier {
			if t := earlier[i].sum.types; t != nil {
				if last == nil {
					common = t
				} else {
					common = intersectTypes(common, t)
				}
				last = &earlier[i]
			}
		}
		if last != nil && !typesShare(common, nt) {
			return conflict(last, "type", "type %v leaves no value with the types %v the earlier constraints allow", nt, common)
		}
	}
	if n.sum.finiteKW != "" {
		return nil // intersects has checked n's values against every earlier constraint
	}
	// The values the earlier constraints leave: those of the latest earlier
	// enum or const that pass every earlier constraint. n must admit one.
	var finiteBy *fieldConstraint
	for i := range earlier {
		if earlier[i].sum.finiteKW != "" {
			finiteBy = &earlier[i]
		}
	}
	if finiteBy == nil {
		return nil
	}
	left := slices.ContainsFunc(finiteBy.sum.finite, func(v any) bool {
		if n.valid.Validate(v) != nil {
			return false
		}
		for i := range earlier {
			if earlier[i].valid.Validate(v) != nil {
				return false
			}
		}
		return true
	})
	if !left {
		return conflict(finiteBy, finiteBy.sum.finiteKW, "the constraint leaves none of the values %s %s set by policy %s allows",
			finiteBy.sum.finiteKW, jsonText(finiteBy.sum.finite), finiteBy.by.Ref())
	}
	return nil
}

// types returns a schema's type keyword as a list (nil when absent).
func types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, v := range t {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// typeAdmits reports whether type a admits every value of type b.
func typeAdmits(a, b string) bool { return a == b || a == "number" && b == "integer" }

// typesOutside returns the types of n that no type of e admits.
func typesOutside(n, e []string) []string {
	var out []string
	for _, t := range n {
		if !slices.ContainsFunc(e, func(et string) bool { return typeAdmits(et, t) }) {
			out = append(out, t)
		}
	}
	return out
}

func typesShare(a, b []string) bool { return len(intersectTypes(a, b)) > 0 }

// intersectTypes returns the types whose values both lists admit.
func intersectTypes(a, b []string) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			switch {
			case typeAdmits(x, y):
				out = appendNew(out, y)
			case typeAdmits(y, x):
				out = appendNew(out, x)
			}
		}
	}
	return out
}

// isMultiple reports whether a is an integer multiple of b.
func isMultiple(a, b *big.Rat) bool {
	if b.Sign() == 0 {
		return false
	}
	return new(big.Rat).Quo(a, b).IsInt()
}

// jsonText renders a JSON value briefly for a message.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if s := string(b); len(s) > 120 {
		return s[:117] + "..."
	}
	return string(b)
}
