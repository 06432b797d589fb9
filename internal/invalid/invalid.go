// Package invalid carries field validation failures from any domain to the
// HTTP layer, which answers them with 400 INVALID_ARGUMENT and a "fields"
// member naming each bad field (STYLE §5).
package invalid

import (
	"fmt"
	"strings"
)

// Field is one rejected input: its path (e.g. "spec.vcpu.count" or the query
// parameter "max_page_size") and why it was refused.
type Field struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	// Path, on a refusal of an order's value, names the location in the
	// spec as the catalog item and the service type name it ("image",
	// "env[0].name"), where Field names it in the request
	// ("user_values[2].value").
	Path string `json:"path,omitempty"`
	// DisplayName is the display name of the catalog item field at or
	// above Path, when it has one.
	DisplayName string `json:"display_name,omitempty"`
	// Detail is a second, technical detail of the refusal that Message
	// puts in words (the pattern a value must match, truncated).
	Detail string `json:"detail,omitempty"`
}

// Name is how a person is told which input was refused: Path, followed
// by the display name in parentheses, when there is a Path ("image
// (Container image)"), else Field. Clients name fields the same way
// (pkg/client's InvalidField.Name), so they can tell that a problem's
// detail only lists its fields.
func (f Field) Name() string {
	switch {
	case f.Path == "":
		return f.Field
	case f.DisplayName == "" || f.DisplayName == f.Path:
		return f.Path
	default:
		return f.Path + " (" + f.DisplayName + ")"
	}
}

// Error reports one or more invalid fields. Build it with [New] or [Errors.Add].
type Error struct {
	Fields []Field
}

// New returns an Error for one field. The message is formatted with args.
func New(field, format string, args ...any) *Error {
	return &Error{Fields: []Field{{Field: field, Message: fmt.Sprintf(format, args...)}}}
}

// Error lists the fields in one line.
func (e *Error) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Name() + ": " + f.Message
	}
	return "invalid argument: " + strings.Join(parts, "; ")
}

// ProblemFields adds the fields to the problem+json body.
func (e *Error) ProblemFields() map[string]any {
	return map[string]any{"fields": e.Fields}
}

// Errors collects field errors while a request is checked.
type Errors struct {
	fields []Field
}

// Add records a failure for field.
func (es *Errors) Add(field, format string, args ...any) {
	es.fields = append(es.fields, Field{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Err returns nil when nothing was added, else an *Error with every field.
func (es *Errors) Err() error {
	if len(es.fields) == 0 {
		return nil
	}
	return &Error{Fields: es.fields}
}

// AddField records f as it is.
func (es *Errors) AddField(f Field) {
	es.fields = append(es.fields, f)
}
