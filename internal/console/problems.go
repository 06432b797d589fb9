package console

import (
	"cmp"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// apiError is a problem the API answered (application/problem+json).
type apiError struct {
	Status int
	Title  string `json:"title"`
	Reason string `json:"reason"`
	Detail string `json:"detail"`
	// Fields are the inputs a 400 names.
	Fields []fieldError `json:"fields"`
}

// fieldError is one input the API refused. Field names it in the request
// (user_values[0].value[1]); on an order's value, Path names it in the
// spec (process.args[1]) and DisplayName is the name of the catalog item's
// field at or above Path ("Arguments"): the same members the CLI reads.
type fieldError struct {
	Field       string `json:"field"`
	Message     string `json:"message"`
	Path        string `json:"path"`
	DisplayName string `json:"display_name"`
	// at is the path of the form control the error was shown on, if any:
	// where it is Path, the display name says all.
	at string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Reason, e.Detail) }

// Heading is the problem's title for a page's heading: "Order not found".
func (e *apiError) Heading() string {
	if e.Title != "" {
		return e.Title
	}
	return sentenceCase(strings.ToLower(strings.ReplaceAll(e.Reason, "_", " ")))
}

// Summary is the problem as a sentence. A detail that only lists the
// fields ("invalid argument: restart_policy (Restart policy): must be …")
// says it in the API's terms, and the fields are listed after it: it gives
// way to a count of them.
func (e *apiError) Summary() string {
	if len(e.Fields) > 0 && (e.Detail == "" || e.listsFields()) {
		if len(e.Fields) == 1 {
			return "One value needs a change:"
		}
		return fmt.Sprintf("%d values need a change:", len(e.Fields))
	}
	return sentence(cmp.Or(e.Detail, e.Heading()))
}

// listsFields says whether the detail is the fields again after a prefix,
// as internal/invalid writes them (ctl's repeats reads it the same way).
func (e *apiError) listsFields() bool {
	_, rest, ok := strings.Cut(e.Detail, ": ")
	if !ok {
		return false
	}
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		name := cmp.Or(f.Path, f.Field)
		if f.Path != "" && f.DisplayName != "" && f.DisplayName != f.Path {
			name += " (" + f.DisplayName + ")"
		}
		parts[i] = name + ": " + f.Message
	}
	return rest == strings.Join(parts, "; ")
}

// Label is the name a person knows the input by: its field's display
// name, or "" when it has none.
func (f fieldError) Label() string { return f.DisplayName }

// Code is where the input is, shown when the label does not say it: the
// path of an element or member under the named field (process.args[1]),
// or of an input without a display name (env[0].name, schema.type).
func (f fieldError) Code() string {
	where := cmp.Or(f.Path, f.Field)
	if f.DisplayName != "" && where == f.at {
		return ""
	}
	return where
}

// Sentence is the field's message as the end of a sentence that its name
// starts: "must be at most 10."
func (f fieldError) Sentence() string { return fullStop(f.Message) }

// sentence is s as a sentence: a capital first, a full stop last.
func sentence(s string) string { return sentenceCase(fullStop(s)) }

// fullStop ends s with a full stop, unless it ends with punctuation.
func fullStop(s string) string {
	s = strings.TrimSpace(s)
	if s != "" && !strings.ContainsAny(s[len(s)-1:], ".!?:") {
		s += "."
	}
	return s
}

func sentenceCase(s string) string {
	if s == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
