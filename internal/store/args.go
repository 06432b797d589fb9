package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// JSONArg is a statement argument for a JSON column, made by [JSON]. The
// zero value encodes as JSON null.
type JSONArg struct{ v any }

// JSON returns v as an argument for a JSON column. The statement's Exec or
// Query encodes it with encoding/json when it runs, and an encoding error
// comes back from that call (from [Row.Scan] for QueryRow) before the
// database is reached. So callers pass store.JSON(v) inline and handle the
// error with the statement's, instead of panicking on a value that does not
// encode. A nil v is JSON null, not SQL NULL.
func JSON(v any) JSONArg { return JSONArg{v: v} }

// StringsArg is a statement argument holding a list of strings, made by
// [Strings].
type StringsArg []string

// Strings returns ss as one argument for a set test: PostgreSQL receives a
// text[] (write "x = ANY($1::text[])"), SQLite a JSON array (write
// "x IN (SELECT value FROM json_each(?))").
func Strings(ss []string) StringsArg { return StringsArg(ss) }

// Now returns clock's time (time.Now when clock is nil) in UTC, truncated to
// the microsecond: the precision both engines keep, so a time written reads
// back equal. Domains call it with their Config.Now, so tests can set the
// clock.
func Now(clock func() time.Time) time.Time {
	if clock == nil {
		clock = time.Now
	}
	return clock().UTC().Truncate(time.Microsecond)
}

func (a JSONArg) encode(i int) (json.RawMessage, error) {
	b, err := json.Marshal(a.v)
	if err != nil {
		return nil, fmt.Errorf("store: encode argument %d (%T) as JSON: %w", i+1, a.v, err)
	}
	return b, nil
}

// pgArgs encodes the JSON arguments; pgx takes the other types as they are.
func pgArgs(args []any) ([]any, error) {
	return convertArgs(args, func(i int, a any) (any, bool, error) {
		switch a := a.(type) {
		case JSONArg:
			v, err := a.encode(i)
			return v, true, err
		case StringsArg:
			return append([]string{}, a...), true, nil
		}
		return nil, false, nil
	})
}

// liteArgs turns the argument types SQLite has no native form for into the
// store's canonical text: times as fixed-width UTC, JSON as text (a BLOB would
// be read as SQLite's binary JSONB by the json functions).
func liteArgs(args []any) ([]any, error) {
	return convertArgs(args, func(i int, a any) (any, bool, error) {
		switch a := a.(type) {
		case time.Time:
			return FormatTime(a), true, nil
		case *time.Time:
			if a == nil {
				return nil, true, nil
			}
			return FormatTime(*a), true, nil
		case json.RawMessage:
			if a == nil {
				return nil, true, nil
			}
			return string(a), true, nil
		case JSONArg:
			b, err := a.encode(i)
			return string(b), true, err
		case StringsArg:
			b, _ := json.Marshal(append([]string{}, a...)) // strings always encode
			return string(b), true, nil
		}
		return nil, false, nil
	})
}

// convertArgs replaces the arguments conv converts (it reports ok), copying
// args only when one is.
func convertArgs(args []any, conv func(i int, a any) (v any, ok bool, err error)) ([]any, error) {
	out := args
	for i, a := range args {
		v, ok, err := conv(i, a)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if &out[0] == &args[0] {
			out = append([]any(nil), args...)
		}
		out[i] = v
	}
	return out, nil
}
