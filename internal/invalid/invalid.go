// Package invalid carries field validation failures from any domain to the
// HTTP layer, which answers them with 400 INVALID_ARGUMENT and a "fields"
// member naming each bad field (STYLE §5), and updates that would change a
// member fixed at create, answered 400 INVALID_ARGUMENT ([ImmutableError]).
package invalid

import (
	"encoding/json"
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

// ImmutableError refuses an update that gives a member fixed at create (a
// policy's policy_type, an order's catalog_item_id, any resource's id) a
// value other than its current one: AIP-203's IMMUTABLE, answered 400
// INVALID_ARGUMENT with a "fields" member naming each such member. Naming the member
// with its current value is no change and is not refused, so a resource read
// with GET can be sent back. Build it with [Immutable].
type ImmutableError struct {
	Fields []Field
}

// Immutable returns an ImmutableError for member, whose message shows its
// current value as JSON (`cannot be changed (it is "GLOBAL")`).
func Immutable(member string, current any) *ImmutableError {
	shown, err := json.Marshal(current)
	if err != nil {
		shown = fmt.Appendf(nil, "%v", current)
	}
	return &ImmutableError{Fields: []Field{{Field: member, Message: "cannot be changed (it is " + string(shown) + ")"}}}
}

// Add records another member that the update would change.
func (e *ImmutableError) Add(member string, current any) {
	e.Fields = append(e.Fields, Immutable(member, current).Fields...)
}

// Error names each member: `policy_type cannot be changed (it is "GLOBAL")`.
func (e *ImmutableError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + " " + f.Message
	}
	return strings.Join(parts, "; ")
}

// ProblemFields adds the members to the problem+json body, as [Error] does.
func (e *ImmutableError) ProblemFields() map[string]any {
	return map[string]any{"fields": e.Fields}
}

// AddField records f as it is.
func (es *Errors) AddField(f Field) {
	es.fields = append(es.fields, f)
}
