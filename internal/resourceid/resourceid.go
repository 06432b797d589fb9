// Package resourceid is the rule for an id a client chooses when it creates
// a resource (`?id=` on a create, and the like). AEP-122 says a
// user-specified id follows RFC-1034 in lower case: it starts with a
// lowercase letter, then up to 62 lowercase letters, digits and hyphens,
// and does not end with a hyphen ([Pattern]).
//
// The server generates a UUID when no id is given, and a client must be able
// to create a resource again (apply it, restore it) under the id the server
// gave it earlier: a canonical lowercase UUID is accepted too, although it may
// start with a digit.
//
// The rule is for new ids only. Ids of resources that exist are looked up as
// they are, whatever they look like: they may predate the rule.
package resourceid

import (
	"regexp"

	"github.com/stewardhq/steward/internal/invalid"
)

// Pattern is AEP-122's rule for a client-chosen id.
const Pattern = "^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$"

// UUIDPattern is a canonical lowercase UUID, the form of the ids the server
// generates.
const UUIDPattern = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"

// APIPattern is [Pattern] or [UUIDPattern] as one regular expression: the
// `pattern` api/openapi.yaml gives every client-chosen id.
const APIPattern = Pattern + "|" + UUIDPattern

// Message says why an id is refused, for [invalid.Errors.Add] or
// [invalid.New] under the id's field.
const Message = "must start with a lowercase letter and match " + Pattern + " (AEP-122), or be a UUID"

var apiPattern = regexp.MustCompile(APIPattern)

// Valid reports whether id may be chosen by a client: it matches [Pattern]
// or is a canonical lowercase UUID.
func Valid(id string) bool {
	return apiPattern.MatchString(id)
}

// Check returns nil when id is [Valid], else an [*invalid.Error] naming field
// with [Message].
func Check(field, id string) error {
	if Valid(id) {
		return nil
	}
	return invalid.New(field, "%s", Message)
}
