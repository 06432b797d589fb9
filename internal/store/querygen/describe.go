package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// goType is how a PostgreSQL type is passed and scanned in Go.
type goType struct {
	Name     string // for a NOT NULL value
	Nullable string // for a value that may be NULL
	// Wrap, when set, converts a parameter for the store (store.Strings).
	Wrap string
}

var goTypes = map[uint32]goType{
	25:   {Name: "string", Nullable: "*string"},       // text
	1043: {Name: "string", Nullable: "*string"},       // varchar
	19:   {Name: "string", Nullable: "*string"},       // name
	20:   {Name: "int64", Nullable: "*int64"},         // int8
	23:   {Name: "int64", Nullable: "*int64"},         // int4
	21:   {Name: "int64", Nullable: "*int64"},         // int2
	16:   {Name: "bool", Nullable: "*bool"},           // bool
	701:  {Name: "float64", Nullable: "*float64"},     // float8
	1184: {Name: "time.Time", Nullable: "*time.Time"}, // timestamptz
	17:   {Name: "[]byte", Nullable: "[]byte"},        // bytea
	3802: {Name: "json.RawMessage", Nullable: "json.RawMessage"},
	114:  {Name: "json.RawMessage", Nullable: "json.RawMessage"},
	1009: {Name: "[]string", Nullable: "[]string", Wrap: "store.Strings"}, // text[]
}

// jsonParam is the Go type of a json/jsonb parameter: the store encodes a
// json.RawMessage as it is and a store.JSON(v) with encoding/json.
const jsonParam = "any"

// column is one result column.
type column struct {
	Name string
	Type string
}

// described is what PostgreSQL says about a query.
type described struct {
	Params  []string // Go types, by position
	Columns []column
}

// describe prepares q on conn (unnamed, so nothing stays behind) and maps
// its parameters and result columns to Go types.
func describe(ctx context.Context, conn *pgx.Conn, q *query, params []param) (*described, error) {
	sd, err := conn.PgConn().Prepare(ctx, "", q.SQL, nil)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if len(sd.ParamOIDs) != len(params) {
		return nil, fmt.Errorf("postgres reports %d parameters, the text has %d", len(sd.ParamOIDs), len(params))
	}
	d := &described{}
	for i, oid := range sd.ParamOIDs {
		t, ok := goTypes[oid]
		if !ok {
			return nil, fmt.Errorf("parameter %d (%s) has type %s, which querygen does not map", i+1, params[i].Name, typeName(ctx, conn, oid))
		}
		name := t.Name
		switch {
		case oid == 3802 || oid == 114:
			name = jsonParam
		case params[i].NullTested:
			name = t.Nullable
		case params[i].Column != "":
			notNull, err := columnNotNull(ctx, conn, params[i].Table, params[i].Column)
			if err != nil {
				return nil, fmt.Errorf("parameter %d (%s): %w", i+1, params[i].Name, err)
			}
			if !notNull {
				name = t.Nullable
			}
		}
		d.Params = append(d.Params, name)
	}
	if q.Kind == ":exec" {
		return d, nil
	}
	if len(sd.Fields) == 0 {
		return nil, fmt.Errorf("it is %s but returns no columns", q.Kind)
	}
	items := resultList(lex(q.SQL))
	if len(items) != len(sd.Fields) {
		return nil, fmt.Errorf("postgres reports %d result columns, the text lists %d", len(sd.Fields), len(items))
	}
	outer := outerJoined(q.SQL)
	notNullAnn := annotation(q.SQL, "notnull")
	for i, f := range sd.Fields {
		t, ok := goTypes[f.DataTypeOID]
		if !ok || t.Wrap != "" {
			return nil, fmt.Errorf("result column %s has type %s, which querygen does not map", f.Name, typeName(ctx, conn, f.DataTypeOID))
		}
		if f.Name == "?column?" {
			return nil, fmt.Errorf("result column %d has no name: give it one with AS", i+1)
		}
		notNull := false
		switch {
		case notNullAnn[f.Name]:
			notNull = true
		case f.TableOID != 0:
			var rel string
			err := conn.QueryRow(ctx, `SELECT a.attnotnull, c.relname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
				WHERE a.attrelid = $1 AND a.attnum = $2`, f.TableOID, f.TableAttributeNumber).Scan(&notNull, &rel)
			if err != nil {
				return nil, fmt.Errorf("result column %s: %w", f.Name, err)
			}
			if outer[strings.ToLower(rel)] {
				notNull = false
			}
		default:
			notNull = exprNotNull(items[i].Expr)
		}
		typ := t.Nullable
		if notNull {
			typ = t.Name
		}
		d.Columns = append(d.Columns, column{Name: f.Name, Type: typ})
	}
	return d, nil
}

// exprNotNull reports the expressions that are never NULL: counts,
// EXISTS, NULL tests, literals and COALESCE (written here with a non-NULL
// default).
func exprNotNull(expr string) bool {
	for _, p := range []string{"count (", "exists (", "coalesce (", "'", "true", "false"} {
		if strings.HasPrefix(expr, p) {
			return true
		}
	}
	if strings.HasSuffix(expr, " is null") || strings.HasSuffix(expr, " is not null") {
		return true
	}
	return expr != "" && expr[0] >= '0' && expr[0] <= '9'
}

// outerJoined lists the tables of a query's LEFT JOINs, whose columns may
// be NULL whatever their declaration says.
func outerJoined(sql string) map[string]bool {
	out := map[string]bool{}
	toks := lex(sql)
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].is("LEFT") && toks[i+1].is("JOIN") {
			out[strings.ToLower(toks[i+2].text)] = true
		}
		if toks[i].is("LEFT") && toks[i+1].is("OUTER") && i+3 < len(toks) {
			out[strings.ToLower(toks[i+3].text)] = true
		}
	}
	return out
}

// annotation reads "-- key: a, b" lines of a query as a set.
func annotation(sql, key string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(sql, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "--")
		if !ok {
			continue
		}
		rest, ok = strings.CutPrefix(strings.TrimSpace(rest), key+":")
		if !ok {
			continue
		}
		for _, n := range strings.Split(rest, ",") {
			out[strings.TrimSpace(n)] = true
		}
	}
	return out
}

func columnNotNull(ctx context.Context, conn *pgx.Conn, table, col string) (bool, error) {
	var notNull bool
	err := conn.QueryRow(ctx, `SELECT attnotnull FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2`,
		table, strings.ToLower(col)).Scan(&notNull)
	if err != nil {
		return false, fmt.Errorf("column %s.%s: %w", table, col, err)
	}
	return notNull, nil
}

func typeName(ctx context.Context, conn *pgx.Conn, oid uint32) string {
	var s string
	if err := conn.QueryRow(ctx, "SELECT format_type($1, NULL)", oid).Scan(&s); err != nil {
		return fmt.Sprintf("oid %d", oid)
	}
	return s
}
