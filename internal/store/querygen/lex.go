package main

import (
	"strconv"
	"strings"
)

type tokKind int

const (
	tIdent tokKind = iota
	tString
	tNumber
	tParam
	tPunct
)

type token struct {
	kind tokKind
	text string // identifiers keep their case; compare keywords with is()
	// param is the placeholder's number ($n, ?n, or the next for a bare ?).
	param int
}

func (t token) is(s string) bool {
	return (t.kind == tIdent || t.kind == tPunct) && strings.EqualFold(t.text, s)
}

// lex splits SQL into tokens, dropping comments and numbering placeholders
// the way both engines bind them: $n and ?n by their number, a bare ? as
// one more than the highest number so far.
func lex(sql string) []token {
	var toks []token
	highest := 0
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(sql[i:], "--"):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				i = len(sql)
			} else {
				i += end + 4
			}
		case c == '\'':
			j := i + 1
			for j < len(sql) {
				if sql[j] == '\'' {
					if j+1 < len(sql) && sql[j+1] == '\'' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			toks = append(toks, token{kind: tString, text: sql[i:min(j+1, len(sql))]})
			i = j + 1
		case c == '"':
			j := strings.IndexByte(sql[i+1:], '"')
			if j < 0 {
				j = len(sql) - i - 1
			}
			toks = append(toks, token{kind: tIdent, text: sql[i+1 : i+1+j]})
			i += j + 2
		case c == '$' || c == '?':
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			n := highest + 1
			if j > i+1 {
				n, _ = strconv.Atoi(sql[i+1 : j])
			}
			highest = max(highest, n)
			toks = append(toks, token{kind: tParam, text: sql[i:j], param: n})
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(sql) && (isIdentStart(sql[j]) || sql[j] >= '0' && sql[j] <= '9') {
				j++
			}
			toks = append(toks, token{kind: tIdent, text: sql[i:j]})
			i = j
		case c >= '0' && c <= '9':
			j := i + 1
			for j < len(sql) && (sql[j] >= '0' && sql[j] <= '9' || sql[j] == '.') {
				j++
			}
			toks = append(toks, token{kind: tNumber, text: sql[i:j]})
			i = j
		default:
			n := 1
			for _, op := range []string{"::", "<=", ">=", "<>", "!=", "||", "->>", "->"} {
				if strings.HasPrefix(sql[i:], op) {
					n = len(op)
					break
				}
			}
			toks = append(toks, token{kind: tPunct, text: sql[i : i+n]})
			i += n
		}
	}
	return toks
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// keywords are identifiers that are never a column's name.
var keywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`select from where and or not in is null as on join left right inner outer
		insert into values update set delete returning order by group having limit offset case when then else end
		exists any all distinct union with conflict do nothing true false like between cast coalesce excluded`) {
		keywords[k] = true
	}
}

func isColumn(t token) bool {
	return t.kind == tIdent && !keywords[strings.ToLower(t.text)]
}
