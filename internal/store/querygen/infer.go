package main

import (
	"fmt"
	"regexp"
	"strings"
)

// param is one bound parameter of a query, by position.
type param struct {
	Name string
	// Table and Column name the column the parameter is written to (an
	// INSERT's VALUES or an UPDATE's SET), for its nullability; empty when
	// it is only compared.
	Table, Column string
	// NullTested is set by "$1 IS NULL": NULL is a value it takes.
	NullTested bool
}

var snakeName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// inferParams names a query's parameters, position by position, from the
// column each is compared with or written to, or from its "-- params:"
// annotation. It fails, naming the position, when it cannot name one.
func inferParams(q *query) ([]param, error) {
	toks := lex(q.SQL)
	count := 0
	for _, t := range toks {
		if t.kind == tParam {
			count = max(count, t.param)
		}
	}
	params := make([]param, count)
	if q.Params != nil {
		if len(q.Params) != count {
			return nil, fmt.Errorf("its -- params: annotation names %d parameters but it takes %d", len(q.Params), count)
		}
		for i, n := range q.Params {
			if !snakeName.MatchString(n) {
				return nil, fmt.Errorf("-- params: %q is not a lower_snake name", n)
			}
			params[i].Name = n
		}
	}
	table := targetTable(toks)
	assign := assignedColumns(toks)
	// sameAsNext marks placeholders tested for emptiness ("$1::text = ''
	// OR project = $2"): they take the name of the next one.
	sameAsNext := map[int]bool{}
	for i, t := range toks {
		if t.kind != tParam {
			continue
		}
		p := &params[t.param-1]
		if col, ok := assign[i]; ok && p.Column == "" {
			p.Table, p.Column = table, col
			if p.Name == "" {
				p.Name = col
			}
		}
		if nullTest(toks, i) {
			p.NullTested = true
		}
		if p.Name != "" {
			continue
		}
		name, next := nameAt(toks, i)
		if next {
			sameAsNext[i] = true
			continue
		}
		p.Name = name
	}
	for i, t := range toks {
		if !sameAsNext[i] || params[t.param-1].Name != "" {
			continue
		}
		for _, u := range toks[i+1:] {
			if u.kind == tParam {
				params[t.param-1].Name = params[u.param-1].Name
				break
			}
		}
	}
	for i, p := range params {
		if p.Name == "" {
			return nil, fmt.Errorf("cannot name parameter %d (compare it with a column, or add a -- params: annotation)", i+1)
		}
	}
	return params, nil
}

// nameAt names the placeholder at toks[i] from its neighbours. next reports a
// test for emptiness whose name is that of the following placeholder.
func nameAt(toks []token, i int) (name string, next bool) {
	at := func(k int) token {
		if k < 0 || k >= len(toks) {
			return token{kind: tPunct}
		}
		return toks[k]
	}
	j := i - 1
	if at(j).is("(") && at(j-1).is("ANY") {
		j -= 2
	}
	if at(j).is("(") && at(j-1).is("json_each") {
		// col IN (SELECT value FROM json_each(?))
		for k := j - 2; k >= max(0, j-8); k-- {
			if at(k).is("IN") && isColumn(at(k-1)) {
				return at(k - 1).text, false
			}
		}
	}
	if at(j).is("(") && at(j-1).is("CAST") {
		j -= 2
	}
	if at(j).is("LIMIT") || at(j).is("OFFSET") {
		return strings.ToLower(at(j).text), false
	}
	if op := at(j).text; at(j).kind == tPunct && isComparison(op) || at(j).is("LIKE") {
		if isColumn(at(j - 1)) {
			return bounded(at(j-1).text, op), false
		}
	}
	// After: skip a cast, then "op column" or "= '' OR" / "IS NULL OR".
	k := i + 1
	if at(k).is("::") {
		k += 2
		if at(k).is("[") {
			k += 2
		}
	}
	if op := at(k).text; at(k).kind == tPunct && isComparison(op) {
		if isColumn(at(k + 1)) {
			return bounded(at(k+1).text, flip(op)), false
		}
		if (at(k+1).kind == tString || at(k+1).kind == tNumber) && at(k+2).is("OR") {
			return "", true
		}
	}
	if at(k).is("IS") && at(k+1).is("NULL") && at(k+2).is("OR") {
		return "", true
	}
	return "", false
}

// nullTest reports "$1 IS NULL" (or "$1::type IS NULL") at toks[i].
func nullTest(toks []token, i int) bool {
	k := i + 1
	if k < len(toks) && toks[k].is("::") {
		k += 2
	}
	return k+1 < len(toks) && toks[k].is("IS") && toks[k+1].is("NULL")
}

func isComparison(op string) bool {
	switch op {
	case "=", "<>", "!=", "<", "<=", ">", ">=":
		return true
	}
	return false
}

// bounded names a parameter by the column it bounds: min_x for x > $1,
// max_x for x < $1, x otherwise.
func bounded(col, op string) string {
	col = strings.ToLower(col)
	switch op {
	case ">", ">=":
		return "min_" + col
	case "<", "<=":
		return "max_" + col
	}
	return col
}

func flip(op string) string {
	switch op {
	case "<":
		return ">"
	case "<=":
		return ">="
	case ">":
		return "<"
	case ">=":
		return "<="
	}
	return op
}

// targetTable is the table an INSERT or UPDATE writes, "" for a SELECT.
func targetTable(toks []token) string {
	for i, t := range toks {
		if t.is("INSERT") && i+2 < len(toks) && toks[i+1].is("INTO") {
			return toks[i+2].text
		}
		if t.is("UPDATE") && i+1 < len(toks) && isColumn(toks[i+1]) && (i == 0 || !toks[i-1].is("DO")) {
			return toks[i+1].text
		}
	}
	return ""
}

// assignedColumns maps the token index of each placeholder written to a
// column (an INSERT's VALUES item, or "SET col = $1") to the column.
func assignedColumns(toks []token) map[int]string {
	out := map[int]string{}
	for i := 0; i < len(toks); i++ {
		if toks[i].is("INTO") && i+3 < len(toks) && toks[i+2].is("(") {
			cols, end := list(toks, i+3)
			if end+2 < len(toks) && toks[end+1].is("VALUES") && toks[end+2].is("(") {
				vals, _ := list(toks, end+3)
				for n, v := range vals {
					if n < len(cols) && len(cols[n]) == 1 && len(v) >= 1 && v[0].kind == tParam &&
						(len(v) == 1 || v[1].is("::")) {
						out[v[0].index] = cols[n][0].text
					}
				}
			}
		}
		if toks[i].is("SET") {
			depth := 0
			for k := i + 1; k+2 < len(toks); k++ {
				switch {
				case toks[k].is("("):
					depth++
				case toks[k].is(")"):
					depth--
				}
				if depth < 0 || depth == 0 && (toks[k].is("WHERE") || toks[k].is("RETURNING") || toks[k].is("FROM")) {
					break
				}
				if depth == 0 && isColumn(toks[k]) && toks[k+1].is("=") && toks[k+2].kind == tParam {
					out[k+2] = toks[k].text
				}
			}
		}
	}
	return out
}

type indexed struct {
	token
	index int
}

// list splits the parenthesised list starting at toks[start] (just after
// its "(") at top-level commas, and returns where its ")" is.
func list(toks []token, start int) ([][]indexed, int) {
	var items [][]indexed
	var cur []indexed
	depth := 0
	for k := start; k < len(toks); k++ {
		t := toks[k]
		switch {
		case t.is("("):
			depth++
		case t.is(")"):
			if depth == 0 {
				return append(items, cur), k
			}
			depth--
		case t.is(",") && depth == 0:
			items = append(items, cur)
			cur = nil
			continue
		}
		cur = append(cur, indexed{t, k})
	}
	return append(items, cur), len(toks)
}

// resultItem is one item of a query's select (or RETURNING) list.
type resultItem struct {
	Name string // its alias or column name; "" for an unnamed expression
	Expr string // its text, lower case, for the nullability of expressions
}

// resultList parses the items a query returns: those after a top-level
// RETURNING, else those of its first top-level SELECT.
func resultList(toks []token) []resultItem {
	start := -1
	depth := 0
	for k, t := range toks {
		switch {
		case t.is("("):
			depth++
		case t.is(")"):
			depth--
		case depth == 0 && t.is("RETURNING"):
			start = k + 1
		case depth == 0 && t.is("SELECT") && start < 0:
			start = k + 1
		}
	}
	if start < 0 {
		return nil
	}
	if start < len(toks) && toks[start].is("DISTINCT") {
		start++
	}
	var items []resultItem
	var cur []token
	depth = 0
	emit := func() {
		items = append(items, describeItem(cur))
		cur = nil
	}
	for _, t := range toks[start:] {
		switch {
		case t.is("("):
			depth++
		case t.is(")"):
			depth--
		}
		if depth == 0 && (t.is("FROM") || t.is(";") || t.is("WHERE") || t.is("UNION") || t.is("ORDER") || t.is("LIMIT")) {
			break
		}
		if depth == 0 && t.is(",") {
			emit()
			continue
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		emit()
	}
	return items
}

func describeItem(ts []token) resultItem {
	var b strings.Builder
	expr := ts
	if n := len(ts); n >= 2 && ts[n-2].is("AS") {
		expr = ts[:n-2]
	}
	for _, t := range expr {
		b.WriteString(strings.ToLower(t.text))
		b.WriteByte(' ')
	}
	it := resultItem{Expr: strings.TrimSpace(b.String())}
	n := len(ts)
	switch {
	case n >= 2 && ts[n-2].is("AS") && ts[n-1].kind == tIdent:
		it.Name = ts[n-1].text
	case n == 1 && isColumn(ts[0]):
		it.Name = ts[0].text
	case n == 3 && ts[1].is(".") && isColumn(ts[2]):
		it.Name = ts[2].text
	}
	it.Name = strings.ToLower(it.Name)
	return it
}
