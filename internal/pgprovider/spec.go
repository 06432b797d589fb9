package pgprovider

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/stewardhq/steward/pkg/provider"
)

// ServiceType is the service type the provider realises.
const ServiceType = "postgres-database"

// identifier is what a database, role or extension name must match: the
// schema checks it before an order is accepted, and the provider again
// before any name reaches SQL (a provider is called by Steward alone, but
// checks what it is given all the same).
var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// setting is what encoding and locale must match.
var setting = regexp.MustCompile(`^[A-Za-z0-9_.@-]{1,64}$`)

// instanceIDPattern bounds the instance ids the provider writes into
// comments.
var instanceIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// spec is an order's spec as the provider reads it.
type spec struct {
	Database        string
	Owner           string
	Encoding        string
	Locale          string
	ConnectionLimit int
	Extensions      []string
	// RetainOnDelete keeps a final dump when the instance is deleted.
	RetainOnDelete bool
	// copy is the state of the copy of a rehydration's data into the
	// database, kept on its mark (see desired.Copy); not in the request.
	copy string
}

// parseSpec reads and checks a create request: names default from the
// order (its id, made an identifier), the owner to the database's name;
// an extension must be in allowed.
func parseSpec(req provider.CreateRequest, allowed []string) (spec, error) {
	if !instanceIDPattern.MatchString(req.InstanceID) {
		return spec{}, badSpec("INVALID_ARGUMENT", "instance_id %q is not an id this provider accepts", req.InstanceID)
	}
	s := spec{Encoding: "UTF8", ConnectionLimit: -1}
	raw := req.Spec
	var err error
	if s.Database, err = optString(raw, "database"); err != nil {
		return spec{}, err
	}
	if s.Owner, err = optString(raw, "owner"); err != nil {
		return spec{}, err
	}
	if s.Database == "" {
		s.Database = defaultName(req.Metadata.OrderID, req.InstanceID)
	}
	s.Owner = cmpOr(s.Owner, s.Database)
	for _, f := range [][2]string{{"database", s.Database}, {"owner", s.Owner}} {
		if !identifier.MatchString(f[1]) {
			return spec{}, badSpec("INVALID_ARGUMENT", "%s %q must match %s", f[0], f[1], identifier)
		}
	}
	if enc, err := optString(raw, "encoding"); err != nil {
		return spec{}, err
	} else if enc != "" {
		s.Encoding = enc
	}
	if s.Locale, err = optString(raw, "locale"); err != nil {
		return spec{}, err
	}
	for _, f := range [][2]string{{"encoding", s.Encoding}, {"locale", s.Locale}} {
		if f[1] != "" && !setting.MatchString(f[1]) {
			return spec{}, badSpec("INVALID_ARGUMENT", "%s %q must match %s", f[0], f[1], setting)
		}
	}
	if v, ok := raw["connection_limit"]; ok && v != nil {
		n, ok := v.(float64)
		if !ok || n != float64(int(n)) || n < -1 || n > 100000 {
			return spec{}, badSpec("INVALID_ARGUMENT", "connection_limit must be an integer from -1 (no limit) to 100000")
		}
		s.ConnectionLimit = int(n)
	}
	if v, ok := raw["extensions"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return spec{}, badSpec("INVALID_ARGUMENT", "extensions must be a list of names")
		}
		for _, e := range list {
			name, ok := e.(string)
			if !ok || !identifier.MatchString(name) {
				return spec{}, badSpec("INVALID_ARGUMENT", "extension %v must be a name matching %s", e, identifier)
			}
			if !slices.Contains(allowed, name) {
				return spec{}, badSpec("EXTENSION_NOT_ALLOWED", "extension %q is not allowed here; allowed: %s",
					name, allowedList(allowed))
			}
			if !slices.Contains(s.Extensions, name) {
				s.Extensions = append(s.Extensions, name)
			}
		}
	}
	if v, ok := raw["retain_on_delete"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return spec{}, badSpec("INVALID_ARGUMENT", "retain_on_delete must be true or false")
		}
		s.RetainOnDelete = b
	}
	return s, nil
}

// parseSpec reads a request's spec with the provider's allow list, and
// refuses a final dump it has nowhere to keep.
func (p *Provider) parseSpec(req provider.CreateRequest) (spec, error) {
	s, err := parseSpec(req, p.cfg.AllowExtensions)
	if err == nil && s.RetainOnDelete && p.cfg.DumpDir == "" {
		err = badSpec("RETAIN_NOT_SUPPORTED", "retain_on_delete needs a provider started with --dump-dir; this one keeps no dumps")
	}
	return s, err
}

// Validate says whether Create would accept req's spec, making nothing:
// Steward asks before it acknowledges an order, so a name that is not an
// identifier or an extension off the allow list is the order's 400.
func (p *Provider) Validate(_ context.Context, req provider.CreateRequest) error {
	if req.InstanceID == "" {
		req.InstanceID = "validate" // no instance yet: only the spec is judged
	}
	_, err := p.parseSpec(req)
	return err
}

func optString(raw map[string]any, field string) (string, error) {
	v, ok := raw[field]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", badSpec("INVALID_ARGUMENT", "%s must be a string", field)
	}
	return s, nil
}

// defaultName makes an identifier of the order's id (or, for an instance
// created with no order, of the instance's): lower case, every other
// character an underscore, a leading underscore when it starts with a
// digit, cut to 63.
func defaultName(orderID, instanceID string) string {
	src := cmpOr(orderID, instanceID)
	var b strings.Builder
	for _, r := range strings.ToLower(src) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		name = "_" + name
	}
	return name[:min(len(name), 63)]
}

func allowedList(allowed []string) string {
	if len(allowed) == 0 {
		return "none (start the provider with --allow-extension NAME)"
	}
	return strings.Join(allowed, ", ")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// badSpec is a refusal of the request: 400 with reason.
func badSpec(reason, format string, args ...any) error {
	return &provider.HTTPError{Code: 400, Reason: reason, Message: fmt.Sprintf(format, args...)}
}
