package pgprovider

import (
	"strings"
	"testing"

	"github.com/stewardhq/steward/pkg/provider"
)

// Names that could break out of an identifier, and anything else the
// schema refuses, are refused before any SQL: 400 with the field.
func TestParseSpec_RefusesWhatIsNotAName(t *testing.T) {
	t.Parallel()
	bad := []string{`a"b`, "a;drop", "a b", "Ünïcode", "UPPER", "1abc", strings.Repeat("a", 64), ""}
	for _, field := range []string{"database", "owner"} {
		for _, name := range bad {
			spec := map[string]any{"database": "ok", field: name}
			if name == "" && field == "owner" {
				continue // an empty owner defaults to the database
			}
			_, err := parseSpec(provider.CreateRequest{InstanceID: "i-1", Spec: spec}, nil)
			if name == "" {
				// An empty database defaults from the order.
				if err != nil {
					t.Errorf("%s %q: %v, want the default", field, name, err)
				}
				continue
			}
			wantRefusal(t, err, 400, "INVALID_ARGUMENT")
			if !strings.Contains(err.Error(), field) {
				t.Errorf("%s %q: %v does not name the field", field, name, err)
			}
		}
	}
	for _, spec := range []map[string]any{
		{"connection_limit": 1.5}, {"connection_limit": -2.0}, {"connection_limit": "7"},
		{"extensions": "pg_trgm"}, {"extensions": []any{"x;y"}}, {"encoding": "UTF8'"}, {"locale": "en US"},
	} {
		_, err := parseSpec(provider.CreateRequest{InstanceID: "i-1", Spec: spec}, []string{"pg_trgm"})
		wantRefusal(t, err, 400, "INVALID_ARGUMENT")
	}
	_, err := parseSpec(provider.CreateRequest{InstanceID: "i-1", Spec: map[string]any{"extensions": []any{"postgis"}}},
		[]string{"pg_trgm", "citext"})
	wantRefusal(t, err, 400, "EXTENSION_NOT_ALLOWED")
	if !strings.Contains(err.Error(), "pg_trgm, citext") {
		t.Errorf("%v does not give the allow list", err)
	}
}

// Without a name, the database is named after the order, made an
// identifier, and the owner after the database.
func TestParseSpec_NamesDefaultFromTheOrder(t *testing.T) {
	t.Parallel()
	for orderID, want := range map[string]string{
		"web-db": "web_db", "Billing.Main": "billing_main", "42": "_42", strings.Repeat("x", 70): strings.Repeat("x", 63),
	} {
		s, err := parseSpec(provider.CreateRequest{InstanceID: "i-1", Spec: map[string]any{},
			Metadata: provider.CreateMetadata{OrderID: orderID}}, nil)
		if err != nil || s.Database != want || s.Owner != want {
			t.Errorf("order %q: database %q owner %q, %v; want %q", orderID, s.Database, s.Owner, err, want)
		}
	}
}
