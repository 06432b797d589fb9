package main

import (
	"context"
	"strings"
	"testing"
)

func TestInferParams_NamesFromColumns(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"INSERT INTO t (id, name) VALUES ($1, $2::text)", "(id, name)"},
		{"INSERT INTO t (id, name) VALUES (?, ?)", "(id, name)"},
		{"UPDATE t SET status = $1, note = $2 WHERE id = $3", "(status, note, id)"},
		{"SELECT 1 FROM t WHERE ($1::text = '' OR project = $2) AND seq > $3 LIMIT $4", "(project, project, min_seq, limit)"},
		{"SELECT 1 FROM t WHERE (? = '' OR project = ?) AND x.time < ? LIMIT CAST(? AS INTEGER)", "(project, project, max_time, limit)"},
		{"SELECT 1 FROM t WHERE kind = ANY($1::text[])", "(kind)"},
		{"SELECT 1 FROM t WHERE kind IN (SELECT value FROM json_each(?))", "(kind)"},
		{"SELECT 1 FROM t WHERE a = ?1 AND b > ?1", "(a)"},
		{"-- params: who, since\nSELECT 1 FROM t WHERE f(x) = $1 AND g(y) > $2", "(who, since)"},
	} {
		ps, err := inferParams(&query{SQL: tc.sql, Params: annotationList(tc.sql)})
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if got := paramNames(ps); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.sql, got, tc.want)
		}
	}
}

func annotationList(sql string) []string {
	for _, line := range strings.Split(sql, "\n") {
		if m := paramsRE.FindStringSubmatch(line); m != nil {
			var out []string
			for _, p := range strings.Split(m[1], ",") {
				out = append(out, strings.TrimSpace(p))
			}
			return out
		}
	}
	return nil
}

func TestInferParams_RefusesWhatItCannotName(t *testing.T) {
	_, err := inferParams(&query{SQL: "SELECT 1 FROM t WHERE f(x) = $1"})
	if err == nil || !strings.Contains(err.Error(), "cannot name parameter 1") {
		t.Fatalf("got %v, want a refusal naming parameter 1", err)
	}
}

func TestGenerate_RefusesWhenEnginesDisagree(t *testing.T) {
	for _, tc := range []struct{ pg, lite, want string }{
		{"SELECT 1 FROM t WHERE id = $1", "SELECT 1 FROM t WHERE name = ?", "parameters differ"},
		{"SELECT 1 FROM t WHERE id = $1", "SELECT 1 FROM t WHERE id = ? AND name = ?", "parameters differ"},
	} {
		_, err := generate(context.Background(), nil, &query{Kind: ":one", SQL: tc.pg}, &query{Kind: ":one", SQL: tc.lite})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s / %s: got %v, want %q", tc.pg, tc.lite, err, tc.want)
		}
	}
	_, err := generate(context.Background(), nil, &query{Kind: ":one", SQL: "SELECT 1"}, nil)
	if err == nil || !strings.Contains(err.Error(), "postgres only") {
		t.Errorf("a query missing on sqlite: got %v", err)
	}
	_, err = generate(context.Background(), nil, &query{Kind: ":one", SQL: "SELECT 1"}, &query{Kind: ":many", SQL: "SELECT 1"})
	if err == nil || !strings.Contains(err.Error(), ":one on postgres but :many") {
		t.Errorf("kinds differ: got %v", err)
	}
}

func TestResultList(t *testing.T) {
	items := resultList(lex("WITH x AS (SELECT a FROM b) SELECT t.id, name, count(*) AS n, coalesce(y, 0) FROM t"))
	var names []string
	for _, it := range items {
		names = append(names, it.Name)
	}
	if got := strings.Join(names, ","); got != "id,name,n," {
		t.Fatalf("got %q", got)
	}
	if !exprNotNull(items[3].Expr) || exprNotNull("max ( x )") {
		t.Fatal("coalesce is not null, max may be")
	}
}
