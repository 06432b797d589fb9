package adapter

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// templateFuncs are the functions templates may call. Each takes any so
// that a number or bool param pipes into it without a printf first.
var templateFuncs = template.FuncMap{
	"lower": func(v any) string { return strings.ToLower(toString(v)) },
	"upper": func(v any) string { return strings.ToUpper(toString(v)) },
	"trim":  func(v any) string { return strings.TrimSpace(toString(v)) },
	"quote": func(v any) string { return strconv.Quote(toString(v)) },
	// default is written `{{ .x | default "y" }}`: the piped value comes last.
	"default": func(def, v any) any {
		if isEmpty(v) {
			return def
		}
		return v
	},
	"toJson": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

// textTemplate is one templated string. A string without "{{" is kept as
// a literal, so it renders to itself whatever the data.
type textTemplate struct {
	raw string
	t   *template.Template
}

// parseText parses s as a template at field, checking that every name it
// reads from the data (.name or $.name) is in names. A name that is not
// can never be there, and missingkey=error would fail every event.
func parseText(field, s string, names map[string]bool, ps *problems) textTemplate {
	if !strings.Contains(s, "{{") {
		return textTemplate{raw: s}
	}
	t, err := template.New(field).Option("missingkey=error").Funcs(templateFuncs).Parse(s)
	if err != nil {
		ps.add(field, "template: %s", strings.TrimPrefix(err.Error(), "template: "+field+":"))
		return textTemplate{raw: s}
	}
	var unknown []string
	for _, n := range templateRefs(t.Tree.Root) {
		if !names[n] && !slices.Contains(unknown, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		ps.add(field, "template reads %s, which is not a param or capture declared before it", quoteList(unknown))
	}
	return textTemplate{raw: s, t: t}
}

// render executes the template over data.
func (tt textTemplate) render(data map[string]any) (string, error) {
	if tt.t == nil {
		return tt.raw, nil
	}
	var b strings.Builder
	if err := tt.t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// isTemplate reports whether the string is templated.
func (tt textTemplate) isTemplate() bool { return tt.t != nil }

// valueTemplate is a JSON-ish value (a manifest) whose string leaves are
// templates; map keys are not templated.
type valueTemplate struct {
	str  *textTemplate
	m    map[string]valueTemplate
	l    []valueTemplate
	lit  any
	kind byte // 's' string, 'm' map, 'l' list, 'v' other literal
}

// parseValue parses every string leaf of v as a template.
func parseValue(field string, v any, names map[string]bool, ps *problems) valueTemplate {
	switch x := v.(type) {
	case string:
		tt := parseText(field, x, names, ps)
		return valueTemplate{kind: 's', str: &tt}
	case map[string]any:
		vt := valueTemplate{kind: 'm', m: make(map[string]valueTemplate, len(x))}
		for k, e := range x {
			vt.m[k] = parseValue(joinPath(field, k), e, names, ps)
		}
		return vt
	case []any:
		vt := valueTemplate{kind: 'l', l: make([]valueTemplate, len(x))}
		for i, e := range x {
			vt.l[i] = parseValue(field+"["+strconv.Itoa(i)+"]", e, names, ps)
		}
		return vt
	}
	return valueTemplate{kind: 'v', lit: v}
}

// render builds a fresh value tree; the parsed tree is never changed, so
// an Executor may render concurrently.
func (vt valueTemplate) render(data map[string]any) (any, error) {
	switch vt.kind {
	case 's':
		return vt.str.render(data)
	case 'm':
		out := make(map[string]any, len(vt.m))
		for k, e := range vt.m {
			v, err := e.render(data)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case 'l':
		out := make([]any, len(vt.l))
		for i, e := range vt.l {
			v, err := e.render(data)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return vt.lit, nil
}

// templateRefs returns the top-level data names a template reads: the
// first identifier of each .field outside range and with bodies (where
// dot is rebound), and of each $.field anywhere.
func templateRefs(root parse.Node) []string {
	var refs []string
	var walk func(n parse.Node, dotIsRoot bool)
	walkPipe := func(p *parse.PipeNode, dotIsRoot bool) {
		if p == nil {
			return
		}
		for _, c := range p.Cmds {
			walk(c, dotIsRoot)
		}
	}
	walk = func(n parse.Node, dotIsRoot bool) {
		if n == nil || reflect.ValueOf(n).IsNil() {
			return
		}
		switch x := n.(type) {
		case *parse.ListNode:
			for _, c := range x.Nodes {
				walk(c, dotIsRoot)
			}
		case *parse.ActionNode:
			walkPipe(x.Pipe, dotIsRoot)
		case *parse.CommandNode:
			for _, a := range x.Args {
				walk(a, dotIsRoot)
			}
		case *parse.PipeNode:
			walkPipe(x, dotIsRoot)
		case *parse.FieldNode:
			if dotIsRoot && len(x.Ident) > 0 {
				refs = append(refs, x.Ident[0])
			}
		case *parse.VariableNode:
			if len(x.Ident) > 1 && x.Ident[0] == "$" {
				refs = append(refs, x.Ident[1])
			}
		case *parse.ChainNode:
			walk(x.Node, dotIsRoot)
		case *parse.IfNode:
			walkPipe(x.Pipe, dotIsRoot)
			walk(x.List, dotIsRoot)
			walk(x.ElseList, dotIsRoot)
		case *parse.RangeNode:
			walkPipe(x.Pipe, dotIsRoot)
			walk(x.List, false)
			walk(x.ElseList, dotIsRoot)
		case *parse.WithNode:
			walkPipe(x.Pipe, dotIsRoot)
			walk(x.List, false)
			walk(x.ElseList, dotIsRoot)
		case *parse.TemplateNode:
			walkPipe(x.Pipe, dotIsRoot)
		}
	}
	walk(root, true)
	return refs
}

func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// isEmpty is what default replaces: nil, "", and empty lists and maps.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
